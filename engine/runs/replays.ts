import { createRerunsRepository } from '../../db/repositories/reruns';
import { createRunReplaysRepository } from '../../db/repositories/run-replays';
import type { Db } from '../../db/pool';
import type { ReplayBatchOutcome, ReplayInput } from '../contract';
import type { Transaction } from '../unit';

/** Reruns one batch of a replay starts: short statements each, so a batch is a short transaction. */
export const REPLAY_BATCH_SIZE = 50;

/**
 * A replay of an agent's failed runs, batch by batch (replayRunsWorkflow, workflows/replay.ts). Each batch is a
 * unit of work (engine/unit.ts): its reruns (from step 0, each with its run's input) and their starts —
 * `startRun`, so each takes its place in its account's line as any run does (parked when the line is full:
 * RUN_CONCURRENCY_PER_ACCOUNT) — and the replay's progress commit together: a batch retried after a crash
 * starts none twice, and a replay that fails midway has started exactly the reruns it counts.
 */
export function createReplays(deps: { db: Db; transaction: Transaction }) {
  const { db, transaction } = deps;
  const replays = createRunReplaysRepository(db);
  const reruns = createRerunsRepository(db);

  return {
    /** A replay whose batch failed for good stops there: its progress then reads `failed` (started < count). */
    async stopReplay(input: ReplayInput): Promise<void> {
      await replays.markStopped(input.replayId);
    },

    async replayRunBatch(input: ReplayInput): Promise<ReplayBatchOutcome> {
      return transaction(async (tx, unit): Promise<ReplayBatchOutcome> => {
        const replay = await replays.findForWork(input.replayId, tx);
        if (!replay) return { done: true };
        const items = await replays.nextItems(replay.id, REPLAY_BATCH_SIZE, tx);
        const done: { ord: number; rerunId: string | null }[] = [];
        for (const item of items) {
          // A run deleted meanwhile (retention) is skipped; its item is done all the same.
          if (!item.run) {
            done.push({ ord: item.ord, rerunId: null });
            continue;
          }
          const rerun = await reruns.insertRerun(tx, item.run, 0);
          await unit.startRun(rerun);
          done.push({ ord: item.ord, rerunId: rerun.id });
        }
        await replays.recordBatch(replay.id, done, tx);
        return { done: items.length < REPLAY_BATCH_SIZE };
      });
    },
  };
}
export type Replays = ReturnType<typeof createReplays>;
