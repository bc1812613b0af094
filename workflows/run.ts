import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunInput } from './types';

const { executeRun } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', maximumAttempts: 5 },
});

/**
 * One agent run, id `run:<runId>`: the activity executes the agent through the executor, stores the
 * output and emits agent.completed / agent.failed (with chainDepth), which chains further runs.
 */
export async function runAgentWorkflow(input: RunInput): Promise<{ status: string }> {
  return executeRun(input);
}
