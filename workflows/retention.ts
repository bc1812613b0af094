import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { RETENTION_STEPS, type RetentionStep } from '../lib/retention';

const { deleteExpiredRows } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  // A batch takes milliseconds: a silent minute means the worker or the database is gone.
  heartbeatTimeout: '1 minute',
  // Bounded: a step that keeps failing waits for the next hourly run rather than retrying forever.
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumAttempts: 3 },
});

export interface RetentionInput {
  /** How long one activity deletes before it returns (default 1 minute). */
  budgetMs?: number;
  /** Activity calls per step and run (default 30): a large backlog is worked off over several runs. */
  maxCallsPerStep?: number;
}

export type RetentionResult = Record<RetentionStep, number>;

/**
 * Retention, started every hour by the Schedule `system:retention` (worker/retention-schedule.ts): each
 * step of lib/retention.ts deletes its expired rows, in batches, through the activity deleteExpiredRows
 * (activities/retention.ts). A step that fails after its retries does not stop the others; the workflow
 * then fails, naming it, so the run shows red in the Temporal UI, and the next run tries again.
 * Returns how many rows each step deleted.
 */
export async function retentionWorkflow(input: RetentionInput = {}): Promise<RetentionResult> {
  const budgetMs = input.budgetMs ?? 60_000;
  const maxCalls = input.maxCallsPerStep ?? 30;
  const deleted = Object.fromEntries(RETENTION_STEPS.map((step) => [step, 0])) as RetentionResult;
  const failed: string[] = [];
  for (const step of RETENTION_STEPS) {
    try {
      for (let call = 0; call < maxCalls; call++) {
        const outcome = await deleteExpiredRows({ step, budgetMs });
        deleted[step] += outcome.deleted;
        if (outcome.done) break;
      }
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      failed.push(`${step} (${err.cause?.message ?? err.message})`);
    }
  }
  if (failed.length > 0) {
    throw ApplicationFailure.nonRetryable(`retention failed for ${failed.join(', ')}; the next run tries again`, 'RetentionFailed', deleted);
  }
  return deleted;
}
