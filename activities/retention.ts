import { Context } from '@temporalio/activity';
import { createRetentionRepository, type RetentionRepository } from '../db/repositories/retention';
import { IDEMPOTENCY_KEEP_HOURS, type RetentionStep } from '../lib/retention';
import type { ActivityDeps } from './deps';

/**
 * Rows per batch: each batch is one statement holding its row locks for milliseconds. Runs take with them
 * what belongs to them alone (their steps), so fewer runs make a batch; deliveries stop when their attempts
 * reach RETENTION_BATCH.attempts.
 */
export const RETENTION_BATCH = { rows: 1000, runs: 100, attempts: 5000 };

/** Each step's one batch (see lib/retention.ts for the order and db/repositories/retention.ts for the rules). */
export function retentionBatches(repo: RetentionRepository, days: number, batch = RETENTION_BATCH): Record<RetentionStep, () => Promise<number>> {
  return {
    deliveries: () => repo.deleteFinishedDeliveries(days, batch.rows, batch.attempts),
    fires: () => repo.deleteFires(days, batch.rows),
    runs: () => repo.deleteFinishedRuns(days, batch.runs),
    events: () => repo.deleteUndeliveredEvents(days, batch.rows),
    hook_receipts: () => repo.deleteHookReceipts(days, batch.rows),
    idempotency_keys: () => repo.deleteIdempotencyKeys(IDEMPOTENCY_KEEP_HOURS, batch.rows),
    rate_limits: () => repo.deleteEndedRateLimits(batch.rows),
    refresh_tokens: () => repo.deleteDeadRefreshTokens(batch.rows),
  };
}

export interface RetentionOutcome {
  deleted: number;
  /** false: the time budget ran out with rows left; the workflow calls again. */
  done: boolean;
}

/**
 * Runs batches until one deletes nothing or `budgetMs` has passed; `afterBatch` sees the running total
 * (heartbeat, cancellation). A batch can delete fewer than its size while more remain (rows locked by a
 * request, the attempts bound), so only an empty batch means done.
 */
export async function deleteInBatches(
  batch: () => Promise<number>,
  opts: { budgetMs: number; deleted?: number; afterBatch?: (deleted: number) => void },
): Promise<RetentionOutcome> {
  const started = Date.now();
  let deleted = opts.deleted ?? 0;
  for (;;) {
    const n = await batch();
    deleted += n;
    opts.afterBatch?.(deleted);
    if (n === 0) return { deleted, done: true };
    if (Date.now() - started >= opts.budgetMs) return { deleted, done: false };
  }
}

export function createRetentionActivities(deps: ActivityDeps) {
  const batches = retentionBatches(createRetentionRepository(deps.db), deps.config.retention.days);

  return {
    /**
     * One step of retentionWorkflow: deletes that step's expired rows in batches for up to `budgetMs`,
     * heartbeating after each batch (a retry resumes the count from the last heartbeat) and stopping
     * between batches when cancelled (worker shutdown).
     */
    async deleteExpiredRows(input: { step: RetentionStep; budgetMs: number }): Promise<RetentionOutcome> {
      const ctx = Context.current();
      const resumed = (ctx.info.heartbeatDetails as { deleted?: number } | undefined)?.deleted ?? 0;
      return deleteInBatches(batches[input.step], {
        budgetMs: input.budgetMs,
        deleted: resumed,
        afterBatch: (deleted) => {
          ctx.heartbeat({ deleted });
          ctx.cancellationSignal.throwIfAborted();
        },
      });
    },
  };
}
