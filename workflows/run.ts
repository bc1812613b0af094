import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunInput } from './types';

const { executeRun } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', maximumAttempts: 5 },
});
const { failRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute' },
});

/**
 * One agent run, id `run:<runId>`: the activity executes the agent through the executor, stores the
 * output and emits agent.completed / agent.failed (with chainDepth), which chains further runs.
 */
export async function runAgentWorkflow(input: RunInput): Promise<{ status: string }> {
  try {
    return await executeRun(input);
  } catch (err) {
    // Every attempt failed (e.g. the database was down throughout): the run fails visibly, never hangs in `running`.
    if (!(err instanceof ActivityFailure)) throw err;
    return failRun({ ...input, error: `the run could not be executed: ${err.cause?.message ?? err.message}` });
  }
}
