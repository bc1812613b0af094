import { createRunsRepository } from '../../db/repositories/runs';
import { RUN_SLOT_FREED_SIGNAL } from '../contract';
import { QUEUE_PLACE_MS, runLineLimits } from '../runs/run-line';
import { workflowIds } from '../temporal/names';
import type { Engine as ActivityDeps } from '../compose';

/** What happens after a run of an account ended: its line moves (engine/runs/run-line.ts). */
export function createWakeUps(deps: ActivityDeps) {
  const { db, client, runLine } = deps;
  const runs = createRunsRepository(db);
  const { limit, holdMs } = runLineLimits(deps.config);

  /** Accounts whose line is being woken (true: asked again meanwhile). */
  const waking = new Map<string, boolean>();

  /**
   * After a run of the account ended (what its event queued was handed off by its unit of work), in the background, the
   * oldest parked runs get a workflow for the free slots (engine/runs/run-line.ts) and the runs with a workflow
   * first in line for them are woken (a signal to `run:<id>`; one that can't be delivered is left to the
   * run's own recheck). In the background so that the run's own workflow task does not wait for its
   * account's line (a flood of one account's ends would otherwise hold the worker's workflow task
   * slots that other accounts' runs need); one wake per account at a time, a request meanwhile makes it
   * go round once more. Lost with the process, it is done by the reconciler's next round (parked runs)
   * or the runs' own recheck (waiting ones).
   */
  function afterEnd(accountId: string): void {
    if (waking.has(accountId)) {
      waking.set(accountId, true);
      return;
    }
    waking.set(accountId, false);
    void (async () => {
      try {
        do {
          waking.set(accountId, false);
          await wakeLine(accountId);
        } while (waking.get(accountId));
      } catch {
        // Covered by the reconciler's round and the runs' recheck (above).
      } finally {
        waking.delete(accountId);
      }
    })();
  }
  async function wakeLine(accountId: string): Promise<void> {
    await runLine.promote(accountId);
    // Most runs end with nobody waiting: one read of the line, and the running runs counted only when it is not empty.
    const waiting = await runs.nextQueuedRuns(accountId, QUEUE_PLACE_MS, limit);
    if (waiting.length === 0) return;
    const free = limit - (await runs.countRunningRuns(accountId, holdMs));
    if (free <= 0) return;
    await Promise.all(waiting.slice(0, free).map((id) => client.workflow.getHandle(workflowIds.run(id)).signal(RUN_SLOT_FREED_SIGNAL).catch(() => {})));
  }

  return { afterEnd };
}
export type WakeUps = ReturnType<typeof createWakeUps>;
