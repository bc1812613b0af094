import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { withTransaction, type Db, type Queryable } from '../db/pool';
import { describeCronExpression } from './cron';
import { parseDuration } from './durations';
import { scheduledFireAction } from './engine-starts';
import { searchAttributePairs, workflowIds } from './temporal-names';

/** The columns of a trigger its schedule is built from. */
interface ScheduledTriggerRow {
  id: string;
  account_id: string;
  agent_id: string | null;
  type: string;
  enabled: boolean;
  /** updated_at as Postgres prints it (microseconds kept): the version of the row being synced. */
  version?: string;
  config_json: { cronExpression: string; timezone: string; overlapPolicy?: string; catchupWindow?: string };
}

const OVERLAP: Record<string, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  buffer_all: ScheduleOverlapPolicy.BUFFER_ALL,
  cancel_other: ScheduleOverlapPolicy.CANCEL_OTHER,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

export const isScheduled = (type: string) => type === 'schedule' || type === 'cron';

/**
 * The Temporal Schedule of an enabled-or-paused cron/schedule trigger (DESIGN §4 Triggers). Temporal is
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
      catchupWindow: parseDuration(config.catchupWindow ?? '1h'),
    },
    typedSearchAttributes: searchAttributePairs(tags),
    state: { paused: !row.enabled, note: row.enabled ? undefined : 'trigger disabled' },
  };
}

/**
 * Converges the schedule `trigger:<id>` to the trigger's row: created or rewritten (paused when
 * disabled) while the row is a cron/schedule trigger, deleted once it is gone or changed type.
 * Idempotent; the outbox calls it after every write that could change it, the reconciler's sweep too.
 * Records Temporal's next action time as the trigger's `next_fire_at`.
 *
 * Syncs of one trigger are serialised (a transaction-scoped advisory lock across processes): Temporal's
 * schedule update is last-writer-wins, so two syncs that read different versions of the row must not
 * interleave, or the older version could be written last.
 */
export async function syncTriggerSchedule(client: Client, db: Db, triggerId: string): Promise<'synced' | 'deleted'> {
  return withTransaction(db, async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('schedule-sync'), hashtext($1))`, [triggerId]);
    return syncLocked(client, tx, triggerId);
  });
}

async function syncLocked(client: Client, db: Queryable, triggerId: string): Promise<'synced' | 'deleted'> {
  const { rows } = await db.query<ScheduledTriggerRow>(
    `SELECT id, account_id, agent_id, type, enabled, config_json, updated_at::text AS version FROM triggers WHERE id = $1`,
    [triggerId],
  );
  const row = rows[0];
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
  const description = await handle.describe();
  const next = row.enabled ? (description.info.nextActionTimes[0] ?? null) : null;
  // Only for the version synced: a write since then has queued its own sync.
  await db.query(`UPDATE triggers SET next_fire_at = $2 WHERE id = $1 AND updated_at = $3::timestamptz`, [triggerId, next, row.version]);
  return 'synced';
}
