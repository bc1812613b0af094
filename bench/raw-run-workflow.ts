import { proxyActivities } from '@temporalio/workflow';

/**
 * The baseline for bench/runs.ts: the three calls of a model run (model, tool, model) as three bare
 * activities of one workflow, with nothing else — no database, no steps recorded, no events.
 */
const { rawModelCall, rawToolCall } = proxyActivities<{
  rawModelCall(withToolResult: boolean): Promise<string>;
  rawToolCall(): Promise<string>;
}>({ startToCloseTimeout: '1 minute' });

export async function rawModelRunWorkflow(): Promise<string> {
  await rawModelCall(false);
  const result = await rawToolCall();
  await rawModelCall(true);
  return result;
}
