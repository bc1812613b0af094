import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { withTransaction, type Db } from '../../db/pool';
import { createTriggersRepository, type ScheduledTriggerRow, type TriggersRepository } from '../../db/repositories/triggers';
import { DEFAULT_CATCHUP_WINDOW, describeCronExpression } from '../../lib/cron';
import { parseDuration } from '../../lib/durations';
import { scheduledFireAction } from '../outbox/starts';
import { searchAttributePairs, workflowIds } from '../temporal/names';

const OVERLAP: Record<string, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  buffer_all: ScheduleOverlapPolicy.BUFFER_ALL,
  cancel_other: ScheduleOverlapPolicy.CANCEL_OTHER,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

export const isScheduled = (type: string) => type === 'schedule' || type === 'cron';

/**
 * The Temporal Schedule of an enabled-or-paused cron/schedule trigger (docs/architecture.md § When a trigger is written (schedules)). Temporal is
 * given the compiled 7-field cron string (or an interval for `@every`), never the user's text: their
 * 6-field forms differ (ours is seconds-first, Temporal's is year-last).
 */
export function scheduleOptions(row: ScheduledTriggerRow): ScheduleOptions {
  const config = row.config_json;
  const cron = describeCronExpression(config.cronExpression);
  const tags = { accountId: row.account_id, agentId: row.agent_id, triggerId: row.id };
  return {
    scheduleId: workflowIds.triggerSchedule(row.id),
    spec:
      cron.kind === 'every'
        ? { intervals: [{ every: cron.intervalMs }], timezone: config.timezone }
        : { cronExpressions: [cron.temporalCronString], timezone: config.timezone },
    action: scheduledFireAction(row),
    policies: {
      overlap: OVERLAP[config.overlapPolicy ?? 'skip'] ?? ScheduleOverlapPolicy.SKIP,
      catchupWindow: parseDuration(config.catchupWindow ?? DEFAULT_CATCHUP_WINDOW),
    },
    typedSearchAttributes: searchAttributePairs(tags),
    state: { paused: !row.enabled, note: row.enabled ? undefined : 'trigger disabled' },
  };
}

/**
 * Converges the schedule `trigger:<id>` to the trigger's row: created or rewritten (paused when
 * disabled) while the row is a cron/schedule trigger, deleted once it is gone or changed type.
 * Idempotent; the outbox calls it after every write that could change it, the reconciler's sweep too.
 * Nothing is read back: a trigger's nextFireAt is computed from its expression (lib/cron.ts), which is
 * validated to mean what Temporal's spec means.
 *
 * Syncs of one trigger are serialised (a transaction-scoped advisory lock across processes): Temporal's
 * schedule update is last-writer-wins, so two syncs that read different versions of the row must not
 * interleave, or the older version could be written last.
 */
export async function syncTriggerSchedule(client: Client, db: Db, triggerId: string): Promise<'synced' | 'deleted'> {
  return withTransaction(db, async (tx) => {
    const triggers = createTriggersRepository(tx);
    await triggers.lockScheduleSync(triggerId);
    return syncLocked(client, triggers, triggerId);
  });
}

async function syncLocked(client: Client, triggers: TriggersRepository, triggerId: string): Promise<'synced' | 'deleted'> {
  const row = await triggers.findForSchedule(triggerId);
  const handle = client.schedule.getHandle(workflowIds.triggerSchedule(triggerId));
  if (!row || !isScheduled(row.type)) {
    try {
      await handle.delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
    return 'deleted';
  }
  const options = scheduleOptions(row);
  try {
    await client.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    const { scheduleId: _id, ...update } = options;
    await handle.update(() => ({ ...update, state: { paused: options.state!.paused, note: options.state!.note } }));
  }
  return 'synced';
}
