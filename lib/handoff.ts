import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Db } from '../db/pool';
import { afterCommit } from '../db/write-unit';
import { createOutboxRepository, type OutboxItem } from '../db/repositories/outbox';
import { syncTriggerSchedule } from './schedules';
import { fairnessOf, searchAttributePairs, TASK_QUEUE } from './temporal-names';

const BATCH = 100;
const LEASE_MS = 60_000;
const RPC_DEADLINE_MS = 10_000;
const SYNC_CONCURRENCY = 4;

/**
 * Hands outbox rows to Temporal (docs/architecture.md § The outbox…). Every process that commits outbox rows calls `kick()`
 * after the commit, so the hand-off is immediate in the normal case; the worker's reconciler calls
 * `drain()` every few seconds, so a row whose hand-off failed (Temporal down, process killed) is
 * handed off later. Every hand-off is idempotent: deterministic workflow ids, and schedule syncs that
 * converge to the row.
 */
export function createHandOff(deps: { db: Db; client: Client; log?: (msg: string, err?: unknown) => void }) {
  const outbox = createOutboxRepository(deps.db);
  const log = deps.log ?? (() => {});
  let running: Promise<number> | null = null;
  let again = false;

  async function handOne(item: OutboxItem): Promise<void> {
    const call = <T>(fn: () => Promise<T>) => deps.client.connection.withDeadline(Date.now() + RPC_DEADLINE_MS, fn);
    if (item.kind === 'schedule') {
      await call(() => syncTriggerSchedule(deps.client, deps.db, item.payload.triggerId));
      return;
    }
    const start = item.payload;
    try {
      await call(() =>
        deps.client.workflow.start(start.workflowType, {
          workflowId: start.workflowId,
          taskQueue: TASK_QUEUE,
          args: start.args,
          typedSearchAttributes: searchAttributePairs(start.tags),
          priority: fairnessOf(start.tags),
        }),
      );
    } catch (err) {
      // A repeated hand-off of the same id is a no-op, never a duplicate.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  /** Hands off everything available now; returns how many rows were handed off. */
  async function drainOnce(): Promise<number> {
    let handed = 0;
    for (;;) {
      const items = await outbox.claim(BATCH, LEASE_MS);
      if (items.length === 0) return handed;
      const done: number[] = [];
      // Each item is idempotent and a schedule sync converges to the row as it is now, so order doesn't
      // matter. Workflow starts go all at once; schedule syncs hold a pooled connection (their lock) for
      // their RPCs, so at most SYNC_CONCURRENCY of them run at a time.
      const handle = async (item: OutboxItem) => {
        try {
          await handOne(item);
          done.push(item.id);
        } catch (err) {
          log(`hand-off of outbox row ${item.id} (${item.kind}) failed; will retry`, err);
          await outbox.fail(item.id, (err as Error).message ?? String(err)).catch(() => {});
        }
      };
      const syncs = items.filter((i) => i.kind === 'schedule');
      const syncLanes = Array.from({ length: SYNC_CONCURRENCY }, async () => {
        for (let next = syncs.shift(); next; next = syncs.shift()) await handle(next);
      });
      await Promise.all([...items.filter((i) => i.kind === 'workflow').map(handle), ...syncLanes]);
      await outbox.complete(done);
      handed += done.length;
      if (done.length < items.length) return handed; // something is failing: leave the rest to the next round
    }
  }

  /** One drain at a time per process; a kick during a drain runs one more. */
  function drain(): Promise<number> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      do {
        again = false;
        total += await drainOnce();
      } while (again);
      return total;
    })().finally(() => {
      running = null;
    });
    return running;
  }

  return {
    drain,
    /**
     * After a commit that wrote outbox rows: hand them off now, without waiting (errors are the
     * reconciler's). Inside a write unit (db/write-unit.ts) "now" is when the unit commits; never if it
     * rolls back.
     */
    kick(): void {
      afterCommit(() => void drain().catch((err) => log('outbox drain failed; the reconciler will retry', err)));
    },
    /** Resolves when no drain is running (tests, shutdown). */
    async idle(): Promise<void> {
      while (running) await running.catch(() => {});
    },
  };
}
export type HandOff = ReturnType<typeof createHandOff>;
