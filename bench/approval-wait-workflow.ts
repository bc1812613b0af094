import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';

/**
 * The baseline for bench/approvals.ts: a bare workflow that waits on a signal, then makes one activity call
 * (the tool call), with nothing else — no database, no steps, no events, no outbox.
 */
const { bareToolCall } = proxyActivities<{ bareToolCall(i: number): Promise<void> }>({ startToCloseTimeout: '1 minute' });

export const go = defineSignal('go');

export async function bareApprovalWorkflow(i: number): Promise<void> {
  let decided = false;
  setHandler(go, () => {
    decided = true;
  });
  await condition(() => decided);
  await bareToolCall(i);
}
