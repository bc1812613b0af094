import type { ScheduleFireRow, ScheduleHistoryRepository, ScheduleVersionRow } from '../../db/repositories/schedule-history';
import type { TriggerScope, TriggersRepository } from '../../db/repositories/triggers';
import { describeCronExpression } from '../../lib/cron';
import type { Client } from '@temporalio/client';
import { expectedTimes, firesBeforeGaps, judgeExpectedFires, type RecordedFire, type ScheduleVersion } from '../../lib/expected-fires';
import { fireWorkflowEnds, isScheduled } from '../../engine';
import { localTime, scheduleClock } from '../../lib/schedule-times';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import type { Caller } from './auth-service';

const DAY_MS = 86_400_000;

export const toVersion = (row: ScheduleVersionRow): ScheduleVersion => ({
  validFrom: row.valid_from,
  type: row.type,
  enabled: row.enabled,
  cronExpression: row.cron_expression,
  timezone: row.timezone,
  overlapPolicy: row.overlap_policy,
  catchupWindow: row.catchup_window,
});

export const toRecordedFire = (row: ScheduleFireRow): RecordedFire => ({
  id: row.id,
  scheduledAt: row.scheduled_at,
  recordedAt: row.recorded_at,
  status: row.status,
  runId: row.run_id,
});

export interface ExpectedFiresQuery {
  from?: string;
  to?: string;
  limit: number;
  cursor?: string;
}

function decodeCursor(cursor: string): Date {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 1 && typeof value[0] === 'number' && Number.isSafeInteger(value[0])) return new Date(value[0]);
  } catch {
    // fall through
  }
  throw new ValidationError('querystring.cursor: is not a valid cursor');
}
const encodeCursor = (at: Date) => Buffer.from(JSON.stringify([at.getTime()])).toString('base64url');

/**
 * Schedule truth (docs/api.md § Triggers): the times a cron/schedule trigger should have fired and what became
 * of each, and the next times it will fire, both computed as its Temporal Schedule computes them.
 */
export function createScheduleTruthService(deps: {
  triggers: TriggersRepository;
  history: ScheduleHistoryRepository;
  /** RETENTION_DAYS: fires older than this are deleted, so older times cannot be judged. */
  retentionDays: number;
  /** MISSED_FIRE_GRACE_MS */
  graceMs: number;
  /** The process's Temporal client: when did the fire workflows before gaps end (fireWorkflowEnds). */
  temporal: Client;
  now?: () => Date;
}) {
  const { triggers, history } = deps;
  const now = deps.now ?? (() => new Date());

  function nextTimes(cronExpression: string, timezone: string, n: number) {
    const clock = scheduleClock(describeCronExpression(cronExpression), timezone);
    const times: { at: string; localTime: string }[] = [];
    for (let at = clock.next(now()); at && times.length < n; at = clock.next(at)) times.push({ at: at.toISOString(), localTime: localTime(at, timezone) });
    return times;
  }

  async function requireScheduled(caller: Caller, scope: TriggerScope, id: string) {
    const row = await triggers.findById(caller.accountId, scope, id);
    if (!row) throw new NotFoundError('Trigger');
    if (!isScheduled(row.type)) throw new ConflictError(`Trigger is a ${row.type} trigger; only cron and schedule triggers fire on a schedule`);
    return row;
  }

  return {
    /** One page of expected fires in [from, to), oldest first; `cursor` continues after the last one shown. */
    async expectedFires(caller: Caller, scope: TriggerScope, id: string, query: ExpectedFiresQuery) {
      // The query first: bad input is a 400 whatever the trigger.
      const at = now();
      const to = query.to ? new Date(query.to) : at;
      const end = to.getTime() > at.getTime() ? at : to; // the future has not happened: see …/preview
      const from = query.from ? new Date(query.from) : new Date(end.getTime() - DAY_MS);
      if (from.getTime() >= end.getTime()) throw new ValidationError(`querystring.from: must be before to (and before now: ${at.toISOString()})`);
      const oldest = at.getTime() - deps.retentionDays * DAY_MS;
      if (from.getTime() < oldest) {
        throw new ValidationError(`querystring.from: must be within the last ${deps.retentionDays} days (RETENTION_DAYS): older fires are deleted`);
      }
      let after = new Date(from.getTime() - 1);
      if (query.cursor) {
        const last = decodeCursor(query.cursor);
        if (last.getTime() < from.getTime() || last.getTime() >= end.getTime()) throw new ValidationError('querystring.cursor: is not a valid cursor');
        after = last;
      }
      await requireScheduled(caller, scope, id);

      const [first] = await history.firstVersions([id]);
      if (!first) return { items: [] };
      const versions = (await history.versions([id], after, end)).map(toVersion);
      const times = expectedTimes(versions, toVersion(first), after, end, query.limit + 1);
      const page = times.slice(0, query.limit);
      if (page.length === 0) return { items: [] };
      const [lo, hi] = [page[0]!.at, page.at(-1)!.at];
      const fires = (await history.fires([id], lo, hi)).map(toRecordedFire);
      const corrections = (await history.corrections([id], lo, at)).map((c) => c.created_at);
      const ends = await fireWorkflowEnds(deps.temporal, id, firesBeforeGaps(page, fires).map((f) => f.scheduledAt));
      const judged = judgeExpectedFires(page, versions, fires, corrections, at, deps.graceMs, ends);
      return {
        items: judged.map((e, i) => ({
          scheduledAt: e.scheduledAt.toISOString(),
          localTime: localTime(e.scheduledAt, page[i]!.version.timezone ?? 'UTC'),
          status: e.status,
          fireId: e.fireId,
          runId: e.runId,
          firedAt: e.recordedAt?.toISOString() ?? null,
          lagMs: e.lagMs,
        })),
        cursor: times.length > query.limit ? encodeCursor(hi) : undefined,
      };
    },

    /** The next `n` fire times from now, in the trigger's zone, as its Temporal Schedule will fire them. */
    async preview(caller: Caller, scope: TriggerScope, id: string, n: number) {
      const row = await requireScheduled(caller, scope, id);
      const config = row.config_json as { cronExpression: string; timezone?: string };
      return nextTimes(config.cronExpression, config.timezone ?? 'UTC', n);
    },

    /** The next `n` times an expression would fire in a zone (both already validated), for a trigger not yet written. */
    previewExpression(cronExpression: string, timezone: string, n: number) {
      return nextTimes(cronExpression, timezone, n);
    },
  };
}
export type ScheduleTruthService = ReturnType<typeof createScheduleTruthService>;
