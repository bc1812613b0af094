import type { ActivityDeps } from './deps';

/** The activity of replayRunsWorkflow (workflows/replay.ts); a batch is engine/runs/replays.ts. */
export function createReplayActivities(deps: ActivityDeps) {
  const { replayRunBatch, stopReplay } = deps.replays;
  return { replayRunBatch, stopReplay };
}
