import { cronExpressionProblem, DEFAULT_CATCHUP_WINDOW, describeCronExpression } from './cron';
import { parseDuration } from './durations';
import { scheduleClock } from './schedule-times';

/**
 * What became of each time a cron/schedule trigger should have fired (docs/api.md § Triggers, *Expected
 * fires*): the times come from its expression and zone as Temporal computes them (lib/schedule-times.ts),
 * version by version of the trigger (trigger_schedule_history); each is joined to the schedule fire
 * recorded for it or, without one, explained from what Postgres knows.
 */
export const EXPECTED_FIRE_STATUSES = [
  'fired',
  'throttled',
  'paused',
  'disabled',
  'before-created',
  'overlap-skipped',
  'catchup-skipped',
  'pending',
  'missed',
] as const;
export type ExpectedFireStatus = (typeof EXPECTED_FIRE_STATUSES)[number];

export interface ScheduleVersion {
  validFrom: Date;
  type: string;
  enabled: boolean;
  cronExpression: string | null;
  timezone: string | null;
  overlapPolicy: string | null;
  catchupWindow: string | null;
}

export interface RecordedFire {
  id: string;
  scheduledAt: Date;
  recordedAt: Date;
  status: 'fired' | 'skipped' | 'throttled';
  runId: string | null;
}

export interface ExpectedFire {
  scheduledAt: Date;
  status: ExpectedFireStatus;
  fireId: string | null;
  runId: string | null;
  recordedAt: Date | null;
  /** recordedAt − scheduledAt, when there is a fire. */
  lagMs: number | null;
}

/** Policies under which Temporal starts nothing while the trigger's previous fire is still running. */
const OVERLAP_SKIPPING = new Set(['skip', 'buffer_one', 'cancel_other', 'terminate_other']);
const DEFAULT_CATCHUP_MS = parseDuration(DEFAULT_CATCHUP_WINDOW);

const isScheduled = (v: ScheduleVersion) => (v.type === 'cron' || v.type === 'schedule') && v.cronExpression !== null && cronExpressionProblem(v.cronExpression) === null;
const catchupOf = (v: ScheduleVersion) => {
  try {
    return parseDuration(v.catchupWindow ?? DEFAULT_CATCHUP_WINDOW);
  } catch {
    return DEFAULT_CATCHUP_MS;
  }
};

/** The version in force at `at` (the last that began at or before it); null before the first. */
function versionAt(versions: readonly ScheduleVersion[], at: Date): ScheduleVersion | null {
  let found: ScheduleVersion | null = null;
  for (const v of versions) {
    if (v.validFrom.getTime() <= at.getTime()) found = v;
    else break;
  }
  return found;
}

/**
 * The times the trigger should have fired strictly after `after` and before `to`, at most `limit`, in order,
 * each with the version it follows (the trigger's first one, marked `beforeCreated`, for times before it).
 * `versions` are oldest first and cover the window (the last before it and every one in it); `first` is the
 * trigger's first version.
 */
export function expectedTimes(
  versions: readonly ScheduleVersion[],
  first: ScheduleVersion,
  after: Date,
  to: Date,
  limit: number,
): { at: Date; version: ScheduleVersion; beforeCreated: boolean }[] {
  const segments: { start: number; end: number; version: ScheduleVersion; beforeCreated: boolean }[] = [
    { start: -Infinity, end: first.validFrom.getTime(), version: first, beforeCreated: true },
  ];
  versions.forEach((v, i) => {
    const end = versions[i + 1]?.validFrom.getTime() ?? Infinity;
    if (end > v.validFrom.getTime()) segments.push({ start: Math.max(v.validFrom.getTime(), first.validFrom.getTime()), end, version: v, beforeCreated: false });
  });
  const times: { at: Date; version: ScheduleVersion; beforeCreated: boolean }[] = [];
  for (const segment of segments) {
    const start = Math.max(segment.start, after.getTime() + 1);
    const end = Math.min(segment.end, to.getTime());
    if (start >= end || !isScheduled(segment.version)) continue;
    const clock = scheduleClock(describeCronExpression(segment.version.cronExpression!), segment.version.timezone ?? 'UTC');
    // The first time at or after `start`: next() answers strictly after the second before it.
    for (let at = clock.next(new Date(start - 1000)); at && at.getTime() < end; at = clock.next(at)) {
      if (at.getTime() < start) continue;
      times.push({ at, version: segment.version, beforeCreated: segment.beforeCreated });
      if (times.length >= limit) return times;
    }
  }
  return times;
}

/** The fire scheduled last before `t` (`ordered` by scheduled time). */
function previousFire(ordered: readonly RecordedFire[], t: number): RecordedFire | undefined {
  let found: RecordedFire | undefined;
  for (const f of ordered) {
    if (f.scheduledAt.getTime() < t) found = f;
    else break;
  }
  return found;
}

/**
 * The fires whose workflow may explain the times after them that have no fire (its fire workflow still
 * running then): ask Temporal when each workflow ended (`workflowEnds` of judgeExpectedFires).
 */
export function firesBeforeGaps(times: readonly { at: Date }[], fires: readonly RecordedFire[]): RecordedFire[] {
  const recorded = new Set(fires.map((f) => f.scheduledAt.getTime()));
  const ordered = [...fires].sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
  const found = new Map<string, RecordedFire>();
  for (const { at } of times) {
    if (recorded.has(at.getTime())) continue;
    const previous = previousFire(ordered, at.getTime());
    if (previous) found.set(previous.id, previous);
  }
  return [...found.values()];
}

/**
 * What became of each time. `fires` are the trigger's schedule fires scheduled in the times' span and the
 * nearest one on either side; `corrections` the times the reconciler found its schedule missing or paused;
 * `workflowEnds` when Temporal says the fire workflows of some fires (by scheduled time, ms) ended — a
 * workflow ends a moment after its fire is recorded, unless no worker was there to finish it (still
 * running: a time far ahead).
 * A time without a fire is, in this order:
 * - `before-created` / `disabled`: before the trigger existed, or while it was disabled (schedule paused);
 * - `overlap-skipped`: the workflow of the fire before it was still running at this time (its fire was
 *   recorded after it, or Temporal says the workflow ended after it) and the overlap policy starts nothing
 *   meanwhile (skip; buffer_one: one is kept and fires later; cancel_other);
 * - `missed`: the reconciler found its schedule missing or paused after this time (and before the next
 *   fire): Temporal had nothing to fire it with, and a re-created schedule does not catch up;
 * - `catchup-skipped`: the next fire was recorded more than the catch-up window after this time: the
 *   schedule could not run (Temporal unavailable) until this time's window had closed;
 * - `pending`: its catch-up window and `graceMs` have not passed yet: the fire may still be made;
 * - `missed`: none of the above.
 * A time with a fire is `fired` or `throttled` as recorded, or, when the fire was skipped, `disabled` (the
 * trigger was disabled when the fire ran) or `paused` (its agent was paused or a template).
 */
export function judgeExpectedFires(
  times: readonly { at: Date; version: ScheduleVersion; beforeCreated: boolean }[],
  versions: readonly ScheduleVersion[],
  fires: readonly RecordedFire[],
  corrections: readonly Date[],
  now: Date,
  graceMs: number,
  workflowEnds: ReadonlyMap<number, Date> = new Map(),
): ExpectedFire[] {
  const byTime = new Map(fires.map((f) => [f.scheduledAt.getTime(), f]));
  const ordered = [...fires].sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
  return times.map(({ at, version, beforeCreated }) => {
    const t = at.getTime();
    const fire = byTime.get(t);
    if (fire) {
      const status: ExpectedFireStatus =
        fire.status === 'skipped' ? (versionAt(versions, fire.recordedAt)?.enabled === false ? 'disabled' : 'paused') : fire.status;
      return { scheduledAt: at, status, fireId: fire.id, runId: fire.runId, recordedAt: fire.recordedAt, lagMs: fire.recordedAt.getTime() - t };
    }
    const unfired = (status: ExpectedFireStatus): ExpectedFire => ({ scheduledAt: at, status, fireId: null, runId: null, recordedAt: null, lagMs: null });
    if (beforeCreated) return unfired('before-created');
    if (!version.enabled) return unfired('disabled');
    const previous = previousFire(ordered, t);
    const previousEnded = previous && Math.max(previous.recordedAt.getTime(), workflowEnds.get(previous.scheduledAt.getTime())?.getTime() ?? 0);
    if (previousEnded && previousEnded > t && OVERLAP_SKIPPING.has(version.overlapPolicy ?? 'skip')) return unfired('overlap-skipped');
    const next = ordered.find((f) => f.scheduledAt.getTime() > t);
    const nextRecorded = next ? next.recordedAt.getTime() : now.getTime();
    if (corrections.some((c) => c.getTime() > t && c.getTime() <= nextRecorded)) return unfired('missed');
    const catchup = catchupOf(version);
    if (next && next.recordedAt.getTime() - t > catchup) return unfired('catchup-skipped');
    if (now.getTime() - t < catchup + graceMs) return unfired('pending');
    return unfired('missed');
  });
}
