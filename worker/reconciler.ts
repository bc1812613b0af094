import type { Client } from '@temporalio/client';
import type { Db } from '../db/pool';
import { createTriggersRepository } from '../db/repositories/triggers';
import { startScheduleSync } from '../lib/engine-starts';
import type { HandOff } from '../lib/handoff';
import { SCHEDULE_ID_PREFIX } from '../lib/temporal-names';

/**
 * Converges Temporal to Postgres (docs/architecture.md § The outbox, the hand-off and the reconciler), in the worker process:
 * - every `intervalMs`: hands off the outbox rows not yet acknowledged (Temporal was down, a process
 *   died between commit and hand-off);
 * - on start and every `sweepEveryMs`: compares the `trigger:*` schedules Temporal lists with the
 *   cron/schedule triggers in Postgres and queues a sync for each difference (missing, orphaned,
 *   paused when it should run or the other way round). `schedule.list()` is eventually consistent, so
 *   a difference only queues an idempotent sync, never a direct delete.
 */
export function startReconciler(deps: {
  db: Db;
  client: Client;
  handOff: HandOff;
  intervalMs: number;
  sweepEveryMs: number;
  log: (msg: string, err?: unknown) => void;
}) {
  const { db, client, handOff, log } = deps;
  const triggers = createTriggersRepository(db);
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
    const stale = new Set<string>();
    for (const row of await triggers.listScheduled()) {
      const paused = listed.get(row.id);
      if (paused === undefined || paused === row.enabled) stale.add(row.id);
      listed.delete(row.id);
    }
    for (const orphan of listed.keys()) stale.add(orphan);
    for (const id of stale) await startScheduleSync(db, id);
    return stale.size;
  }

  const loop = (async () => {
    while (!stopped) {
      try {
        if (Date.now() - lastSweep >= deps.sweepEveryMs) {
          const queued = await sweep();
          lastSweep = Date.now();
          if (queued) log(`reconciler: ${queued} schedule(s) differ from Postgres; syncing`);
        }
        await handOff.drain();
      } catch (err) {
        log('reconciler round failed; retrying', err);
      }
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
