import { proxyActivities } from '@temporalio/workflow';

interface Work {
  work(ms: number): Promise<void>;
}

/** One task of one tenant: a workflow task, then one activity of `ms`, on `taskQueue` when given (bench/fairness.ts). */
export async function tenantTask(ms: number, taskQueue?: string): Promise<void> {
  const { work } = proxyActivities<Work>({ startToCloseTimeout: '1 minute', ...(taskQueue ? { taskQueue } : {}) });
  await work(ms);
}
