import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Db } from '../../db/pool';
import { afterCommit } from '../../db/write-unit';
import { createOutboxRepository, type OutboxItem } from '../../db/repositories/outbox';
import type { FirstAttempts } from '../deliveries/first-attempts';
import { syncTriggerSchedule } from '../fires/schedules';
import { fairnessOf, searchAttributePairs, TASK_QUEUE } from '../temporal/names';
import type { FirstAttempt } from './starts';
import { withTraceCarrier } from '../../lib/tracing/context';

const BATCH = 100;
/**
 * A claimed row is hidden from other drainers this long: a process killed mid-drain delays its rows by
 * at most this much (the reconciler of a live worker then hands them off). A batch stops taking new
 * schedule syncs after SYNC_BUDGET_MS and gives the rest back, so it never outlives its lease.
 */
const LEASE_MS = 15_000;
const SYNC_BUDGET_MS = 5_000;
const RPC_DEADLINE_MS = 10_000;
const SYNC_CONCURRENCY = 4;

/**
 * Hands outbox rows to Temporal (docs/architecture.md § The outbox, the hand-off and the reconciler). Every process that commits outbox
 * rows calls `kick()` after the commit, so the hand-off is immediate in the normal case; the worker's reconciler calls
 * `drain()` every few seconds, so a row whose hand-off failed (Temporal down, process killed) is
 * handed off later. Every hand-off is idempotent: deterministic workflow ids, and schedule syncs that
 * converge to the row.
 *
 * With `firstAttempts` (the API and the worker: engine/compose.ts), a kick also makes the first attempt
 * of the deliveries the commit wrote with their workflow start held back (engine/deliveries/first-attempts.ts):
 * most deliveries never need a workflow. Without it (or when the attempter is gone), a held start is
 * handed off once its hold ends.
 */
export function createHandOff(deps: {
  db: Db;
  client: Client;
  log?: (msg: string, err?: unknown) => void;
  firstAttempts?: FirstAttempts | null;
}) {
  const outbox = createOutboxRepository(deps.db);
  const log = deps.log ?? (() => {});
  let running: Promise<number> | null = null;
  let again = false;
  const kick = () => {
    drain().catch((err) => log('outbox drain failed; the reconciler will retry', err));
  };
  const firstAttempts = deps.firstAttempts ?? null;

  async function handOne(item: OutboxItem): Promise<void> {
    const call = <T>(fn: () => Promise<T>) => deps.client.connection.withDeadline(Date.now() + RPC_DEADLINE_MS, fn);
    if (item.kind === 'schedule') {
      await call(() => syncTriggerSchedule(deps.client, deps.db, item.payload.triggerId));
      return;
    }
    if (item.kind === 'signal') {
      const { workflowId, signal } = item.payload;
      try {
        await call(() => deps.client.workflow.getHandle(workflowId).signal(signal));
      } catch (err) {
        // The workflow closed meanwhile (its run ended): nothing is left to tell.
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      return;
    }
    const start = item.payload;
    try {
      // In the trace of the work's cause (its stored context), whichever process hands it off.
      await withTraceCarrier(start.trace, () => call(() =>
        deps.client.workflow.start(start.workflowType, {
          workflowId: start.workflowId,
          // Every outbox row names a workflow id of its own, started once: a hand-off repeated after that
          // workflow already closed (a claim whose lease ran out while the first hand-off completed) must not
          // run it again, which Temporal's default (ALLOW_DUPLICATE) would.
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          taskQueue: TASK_QUEUE,
          args: start.args,
          typedSearchAttributes: searchAttributePairs(start.tags),
          priority: fairnessOf(start.tags, start.backlog),
        }),
      ));
    } catch (err) {
      // A repeated hand-off of the same id, running or closed, is a no-op, never a duplicate.
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
      // matter. Workflow starts go all at once; schedule syncs (several RPCs each, and two reads of their
      // row) run at most SYNC_CONCURRENCY at a time.
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
      const started = Date.now();
      const syncLanes = Array.from({ length: SYNC_CONCURRENCY }, async () => {
        while (syncs.length > 0 && Date.now() - started < SYNC_BUDGET_MS) await handle(syncs.shift()!);
      });
      await Promise.all([...items.filter((i) => i.kind !== 'schedule').map(handle), ...syncLanes]);
      await outbox.complete(done);
      handed += done.length;
      if (syncs.length > 0) {
        await outbox.release(syncs.map((i) => i.id)); // for the next claim, at once
        continue;
      }
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
     * reconciler's), and make the first attempts of the `held` deliveries it wrote. Inside a write unit
     * (db/write-unit.ts) "now" is when the unit commits; never if it rolls back.
     */
    kick(held: FirstAttempt[] = []): void {
      afterCommit(() => {
        if (held.length > 0 && firstAttempts) firstAttempts.make(held);
        kick();
      });
    },
    /** Resolves when no drain and no first attempt is running (tests, shutdown). */
    async idle(): Promise<void> {
      await firstAttempts?.idle();
      while (running) await running.catch(() => {});
    },
  };
}
export type HandOff = ReturnType<typeof createHandOff>;
