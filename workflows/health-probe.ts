import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { checkDatabase } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

/** Runs one activity on the worker: an operator (or a test) can see the whole pipeline answer. */
export async function healthProbeWorkflow(): Promise<{ ok: boolean; database: string }> {
  return checkDatabase();
}
