import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { Db } from '../db/pool';
import { createScheduleCorrectionsRepository, type CorrectionReason } from '../db/repositories/schedule-corrections';
import { createTriggersRepository } from '../db/repositories/triggers';
import { SCHEDULE_ID_PREFIX, workflowIds, type Engine, type Transaction } from '../engine';
import { createMissedFireSearch } from './missed-fires';

const WHY: Record<CorrectionReason, string> = {
  missing: 'Temporal has no schedule for this cron/schedule trigger',
  orphaned: 'Temporal has a schedule for a trigger that no longer exists or is no longer cron/schedule',
  paused: 'its schedule is paused but the trigger is enabled',
  unpaused: 'its schedule runs but the trigger is disabled',
};

/**
 * Converges Temporal to Postgres (docs/architecture.md § The outbox, the hand-off and the reconciler), in the worker process:
 * - every `intervalMs`: gives parked runs a workflow where their account has free slots (a safety net:
 *   the end of a run does it at once, engine/runs/run-line.ts), and hands off the outbox rows not yet
 *   acknowledged (Temporal was down, a process died between commit and hand-off);
 * - on start and every `sweepEveryMs`: compares the `trigger:*` schedules Temporal lists with the
 *   cron/schedule triggers in Postgres and queues a sync for each difference (missing, orphaned,
 *   paused when it should run or the other way round). `schedule.list()` is eventually consistent, so
 *   a difference only queues an idempotent sync, never a direct delete. A difference that Temporal's own
 *   describe confirms, and that no queued sync is already mending (a trigger written a moment ago), is a
 *   correction: logged with the trigger and the reason, and recorded (schedule_corrections; GET /metrics
 *   counts them). Then it looks for missed fires (worker/missed-fires.ts): schedule times that passed
 *   without a fire and without a reason each emit `trigger.missed` once.
 */
export function startReconciler(deps: {
  db: Db;
  client: Client;
  handOff: Engine['handOff'];
  /** The engine's unit of work (engine/unit.ts): a schedule sync, a trigger.missed event and its fan-out. */
  transaction: Transaction;
  /** Gives parked runs a workflow where their account has free slots (engine/runs/run-line.ts), every round. */
  runLine?: Pick<Engine['runLine'], 'promoteAll'>;
  intervalMs: number;
  sweepEveryMs: number;
  /** MISSED_FIRE_GRACE_MS (default 60 s). */
  missedFireGraceMs?: number;
  log: (msg: string, err?: unknown) => void;
}) {
  const { db, client, handOff, transaction, log } = deps;
  const triggers = createTriggersRepository(db);
  const corrections = createScheduleCorrectionsRepository(db);
  const searchMissedFires = createMissedFireSearch({ db, client, transaction, graceMs: deps.missedFireGraceMs ?? 60_000, log });
  let stopped = false;
  let lastSweep = 0;
  let wake: (() => void) | null = null;

  async function sweep(): Promise<number> {
    const listed = new Map<string, boolean>();
    for await (const schedule of client.schedule.list()) {
      if (schedule.scheduleId.startsWith(SCHEDULE_ID_PREFIX)) {
        listed.set(schedule.scheduleId.slice(SCHEDULE_ID_PREFIX.length), schedule.state.paused);
      }
    }
    const stale = new Map<string, boolean | null>();
    for (const row of await triggers.listScheduled()) {
      const paused = listed.get(row.id);
      if (paused === undefined || paused === row.enabled) stale.set(row.id, row.enabled);
      listed.delete(row.id);
    }
    for (const orphan of listed.keys()) stale.set(orphan, null);
    for (const [id, enabled] of stale) {
      // A sync already queued (or in flight) mends it. Describe is asked with no connection held (no
      // Temporal call while a pooled connection is held); the correction is then recorded under the
      // trigger's lock, so that two workers' sweeps never count one difference twice.
      if (await corrections.syncQueued(id)) continue;
      const found = await confirmedDifference(id, enabled);
      const reason = await transaction(async (tx, unit) => {
        await triggers.lockScheduleCorrection(id, tx);
        if (await corrections.syncQueued(id, tx)) return null;
        if (found) await corrections.record(id, found, tx);
        await unit.startScheduleSync(id);
        return found;
      });
      if (reason) log(`reconciler: corrected schedule ${workflowIds.triggerSchedule(id)} (${reason}: ${WHY[reason]}); syncing it`);
    }
    try {
      await searchMissedFires();
    } catch (err) {
      log('reconciler: the search for missed fires failed; the next sweep looks again', err);
    }
    return stale.size;
  }

  /**
   * The list said the schedule of trigger `id` (enabled or not; null: no such cron/schedule trigger)
   * differs: whether describe, which is strongly consistent, says so too, and why. Null when it does not
   * (the list was behind).
   */
  async function confirmedDifference(id: string, enabled: boolean | null): Promise<CorrectionReason | null> {
    let paused: boolean | undefined;
    try {
      paused = (await client.schedule.getHandle(workflowIds.triggerSchedule(id)).describe()).state.paused;
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
    if (enabled === null) return paused === undefined ? null : 'orphaned';
    if (paused === undefined) return 'missing';
    if (paused === enabled) return enabled ? 'paused' : 'unpaused';
    return null;
  }

  const loop = (async () => {
    while (!stopped) {
      try {
        if (Date.now() - lastSweep >= deps.sweepEveryMs) {
          await sweep();
          lastSweep = Date.now();
        }
        await deps.runLine?.promoteAll();
        await handOff.drain();
      } catch (err) {
        log('reconciler round failed; retrying', err);
      }
      // A stop() during the round found nothing to wake: don't start a wait it would sit through.
      if (stopped) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, deps.intervalMs).unref();
      });
    }
  })();

  return {
    sweep,
    async stop(): Promise<void> {
      stopped = true;
      wake?.();
      await loop;
      await handOff.idle();
    },
  };
}
