import { proxyActivities } from '@temporalio/workflow';

/** The baseline for bench/engine.ts: one workflow, one activity that POSTs to the receiver. Nothing else. */
const { rawPost } = proxyActivities<{ rawPost(url: string, body: string): Promise<number> }>({ startToCloseTimeout: '30 seconds' });

export async function rawDeliveryWorkflow(url: string, body: string): Promise<number> {
  return rawPost(url, body);
}
