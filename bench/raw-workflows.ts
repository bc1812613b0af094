import { proxyActivities } from '@temporalio/workflow';

/** The baselines for bench/engine.ts: bare Temporal, nothing of ours. */
const { rawPost } = proxyActivities<{ rawPost(url: string, body: string, id: string): Promise<number> }>({ startToCloseTimeout: '30 seconds' });

/** One workflow, one activity that POSTs to the receiver. */
export async function rawDeliveryWorkflow(url: string, body: string, id: string): Promise<number> {
  return rawPost(url, body, id);
}

/** What a bare Schedule starts: a workflow that does nothing. */
export async function benchEmptyWorkflow(): Promise<void> {}
