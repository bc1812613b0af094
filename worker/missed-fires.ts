import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/pool';
import { createMissedFiresRepository, createScheduleHistoryRepository } from '../db/repositories/schedule-history';
import { expectedTimes, firesBeforeGaps, judgeExpectedFires, type RecordedFire, type ScheduleVersion } from '../lib/expected-fires';
import { parseDuration } from '../lib/durations';
import { fireWorkflowEnds, scheduledFireWorkflowId, type Transaction } from '../engine';

/** Times judged per trigger and search at most (a trigger firing every second, after a day away: the rest are not judged). */
const MAX_TIMES_PER_TRIGGER = 10_000;

const version = (row: { valid_from: Date; type: string; enabled: boolean; cron_expression: string | null; timezone: string | null; overlap_policy: string | null; catchup_window: string | null }): ScheduleVersion => ({
  validFrom: row.valid_from,
  type: row.type,
  enabled: row.enabled,
  cronExpression: row.cron_expression,
  timezone: row.timezone,
  overlapPolicy: row.overlap_policy,
  catchupWindow: row.catchup_window,
});

/** Rows by a key, each mapped, in their order. */
function groupBy<R, K, V>(rows: R[], key: (row: R) => K, map: (row: R) => V): Map<K, V[]> {
  const groups = new Map<K, V[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group) group.push(map(row));
    else groups.set(key(row), [map(row)]);
  }
  return groups;
}

const catchupMs = (v: ScheduleVersion | undefined) => {
  try {
    return parseDuration(v?.catchupWindow ?? '1h');
  } catch {
    return 3_600_000;
  }
};

/**
 * The search for missed fires (docs/api.md § Triggers), part of the reconciler's sweep: every cron/schedule
 * trigger's times that have just become judgeable — older than its catch-up window plus MISSED_FIRE_GRACE_MS,
 * newer than what the previous search judged — are judged as GET …/expected-fires judges them, and each
 * `missed` one is recorded once and emits `trigger.missed` (delivered to webhooks subscribed to it, and
 * firing event triggers listening for it). A time whose fire workflow Temporal still runs (a worker was
 * away; it will be recorded late) is not missed. Workers may search at once: each missed time is recorded and
 * emitted once (record keeps the first) and the watch only moves forward (advance); the first search only starts
 * the watch, from then on.
 */
export function createMissedFireSearch(deps: { db: Db; client: Client; transaction: Transaction; graceMs: number; log: (msg: string, err?: unknown) => void }) {
  const { db, client, transaction, graceMs, log } = deps;
  const history = createScheduleHistoryRepository(db);
  const missed = createMissedFiresRepository(db);

  async function stillRunning(triggerId: string, at: Date): Promise<boolean> {
    try {
      const run = await client.workflow.getHandle(scheduledFireWorkflowId(triggerId, at)).describe();
      return run.status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  return async function searchMissedFires(): Promise<number> {
    // Read and ask Temporal first, holding no pooled connection (no call to Temporal is made while one is held:
    // docs/architecture.md § Limits and fairness); then record and emit what was missed in one unit of work.
    // Two workers judging the same window emit each time once: record() keeps the first, advance() only goes forward.
    const { checkedUntil, now } = await missed.claim();
    if (checkedUntil === null) return 0;
    const triggers = await history.scheduledTriggers();
    if (triggers.length === 0) {
      await missed.advance(now);
      return 0;
    }
    const ids = triggers.map((t) => t.id);
    const firsts = new Map((await history.firstVersions(ids)).map((r) => [r.trigger_id, version(r)]));
    // Every trigger's window ends `catch-up + grace` before now; look back far enough for the longest.
    const latest = new Map((await history.versions(ids, now, new Date(now.getTime() + 1))).map((r) => [r.trigger_id, version(r)]));
    const windowOf = (id: string) => {
      const back = catchupMs(latest.get(id)) + graceMs;
      return { after: new Date(checkedUntil.getTime() - back), to: new Date(now.getTime() - back) };
    };
    const windows = new Map(ids.map((id) => [id, windowOf(id)]));
    const lo = new Date(Math.min(...[...windows.values()].map((w) => w.after.getTime())));
    const versions = groupBy(await history.versions(ids, lo, now), (r) => r.trigger_id, version);
    const fires = groupBy(await history.fires(ids, lo, now), (f) => f.trigger_id, (f): RecordedFire => ({
      id: f.id, scheduledAt: f.scheduled_at, recordedAt: f.recorded_at, status: f.status, runId: f.run_id,
    }));
    const corrections = groupBy(await history.corrections(ids, lo, now), (c) => c.trigger_id, (c) => c.created_at);

    const candidates: { trigger: (typeof triggers)[number]; at: Date }[] = [];
    for (const trigger of triggers) {
      const first = firsts.get(trigger.id);
      const window = windows.get(trigger.id)!;
      if (!first || window.to.getTime() <= window.after.getTime()) continue;
      const own = versions.get(trigger.id) ?? [];
      const times = expectedTimes(own, first, window.after, new Date(window.to.getTime() + 1), MAX_TIMES_PER_TRIGGER);
      const recorded = fires.get(trigger.id) ?? [];
      const fixed = corrections.get(trigger.id) ?? [];
      const ends = await fireWorkflowEnds(client, trigger.id, firesBeforeGaps(times, recorded).map((f) => f.scheduledAt));
      for (const judged of judgeExpectedFires(times, own, recorded, fixed, now, graceMs, ends)) {
        if (judged.status !== 'missed' || (await stillRunning(trigger.id, judged.scheduledAt))) continue;
        candidates.push({ trigger, at: judged.scheduledAt });
      }
    }

    const found = await transaction(async (tx, unit) => {
      const results: typeof candidates = [];
      for (const { trigger, at } of candidates) {
        const eventId = randomUUID();
        if (!(await missed.record(trigger.id, at, eventId, tx))) continue;
        const data: Record<string, unknown> = { triggerId: trigger.id, scheduledAt: at.toISOString() };
        if (trigger.agent_id) data.agentId = trigger.agent_id;
        await unit.emit({ id: eventId, accountId: trigger.account_id, type: 'trigger.missed', data }, { agentId: trigger.agent_id, triggerId: trigger.id });
        results.push({ trigger, at });
      }
      await missed.advance(now, tx);
      return results;
    });
    for (const { trigger, at } of found) log(`missed fire: trigger ${trigger.id} should have fired at ${at.toISOString()} and did not (no fire, no reason); trigger.missed emitted`);
    return found.length;
  };
}
