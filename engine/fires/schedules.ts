import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Db } from '../../db/pool';
import { createTriggersRepository, type ScheduledTriggerRow } from '../../db/repositories/triggers';
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

/** Syncs of one trigger that meet a changed row after their Temporal write before one is given up (the outbox retries it). */
const SYNC_ROUNDS = 5;

/**
 * Converges the schedule `trigger:<id>` to the trigger's row: created or rewritten (paused when
 * disabled) while the row is a cron/schedule trigger, deleted once it is gone or changed type.
 * Idempotent; the outbox calls it after every write that could change it, the reconciler's sweep too.
 * Nothing is read back: a trigger's nextFireAt is computed from its expression (lib/cron.ts), which is
 * validated to mean what Temporal's spec means.
 *
 * No database connection is held during the Temporal calls (docs/architecture.md § When a trigger is
 * written (schedules)): the row is read, written to Temporal, then read again. Temporal's schedule update
 * is last-writer-wins, so a sync whose row changed meanwhile (another sync may have written a newer version
 * before this one's older write landed) writes again; the last write to land is always followed by a read
 * that matches it, so the schedule ends as the row is.
 */
export async function syncTriggerSchedule(client: Client, db: Db, triggerId: string): Promise<'synced' | 'deleted'> {
  const triggers = createTriggersRepository(db);
  let row = await triggers.findForSchedule(triggerId);
  for (let round = 0; round < SYNC_ROUNDS; round++) {
    const outcome = await writeSchedule(client, triggerId, row);
    const now = await triggers.findForSchedule(triggerId);
    if (JSON.stringify(now) === JSON.stringify(row)) return outcome;
    row = now;
  }
  throw new Error(`trigger ${triggerId} changed during each of ${SYNC_ROUNDS} schedule syncs; the outbox will sync it again`);
}

async function writeSchedule(client: Client, triggerId: string, row: ScheduledTriggerRow | null): Promise<'synced' | 'deleted'> {
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
