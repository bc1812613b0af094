import { ActivityFailure, CancellationScope, continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ENGINE_RETRY } from './retry-policies';
import type { ReplayInput } from '../engine/contract';

const { replayRunBatch } = proxyActivities<Activities>({
  // A batch is one transaction of short statements (engine/runs/replays.ts): a silent minute means a dead worker.
  startToCloseTimeout: '1 minute',
  retry: ENGINE_RETRY,
});
const { stopReplay } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: ENGINE_RETRY });

/** Batches per run: the history stays short; the progress lives in the replay's row. */
export const REPLAY_BATCHES_PER_RUN = 20;

/**
 * A replay of an agent's failed runs, id `replay:<replayId>` (POST /api/agents/:id/runs/replay):
 * `replayRunBatch` starts the reruns of the next batch of its runs, each through the account's line of runs,
 * until none is left. Continues as new every REPLAY_BATCHES_PER_RUN batches (or when Temporal suggests it).
 * A batch that fails for good stops the replay there: `stopReplay` ends its row short of its count, which
 * its progress reads as `failed` (each batch is one transaction, so it started exactly what it counts).
 */
export async function replayRunsWorkflow(input: ReplayInput): Promise<'done' | 'failed'> {
  for (let batch = 0; ; batch++) {
    if (batch >= REPLAY_BATCHES_PER_RUN || workflowInfo().continueAsNewSuggested) {
      return continueAsNew<typeof replayRunsWorkflow>(input);
    }
    try {
      const outcome = await replayRunBatch(input);
      if (outcome.done) return 'done';
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      await CancellationScope.nonCancellable(() => stopReplay(input));
      return 'failed';
    }
  }
}
