import { Context } from '@temporalio/activity';
import { createRetentionRepository, type RetentionRepository } from '../db/repositories/retention';
import { IDEMPOTENCY_KEEP_HOURS, type RetentionStep } from '../lib/retention';
import type { ActivityDeps } from './deps';

/**
 * Rows per batch: each batch is one statement holding its row locks for milliseconds. Runs take with them
 * what belongs to them alone (their steps), so fewer runs make a batch; deliveries stop when their attempts
 * reach RETENTION_BATCH.attempts, recoveries when the items they started reach RETENTION_BATCH.recoveryItems.
 */
export const RETENTION_BATCH = { rows: 1000, runs: 100, attempts: 5000, recoveries: 100, recoveryItems: 5000 };

const HOUR_MS = 3_600_000;

/** The times before which rows go, all derived from one reading of the database's clock. */
export interface RetentionCutoffs {
  now: Date;
  /**
   * `RETENTION_DAYS` before `now`: events, fires, runs, deliveries, hook receipts, missed fires, schedule
   * corrections, recoveries, thread messages (also past their agent's memory), ended schedule versions.
   */
  history: Date;
  idempotency: Date;
  /** `USAGE_RETENTION_DAYS` before `now`: an account's days of use. */
  usage: Date;
}

/** `usageDays`: USAGE_RETENTION_DAYS (when not given, the days of `days`). */
export function retentionCutoffs(now: Date, days: number, usageDays = days): RetentionCutoffs {
  return {
    now,
    history: new Date(now.getTime() - days * 24 * HOUR_MS),
    idempotency: new Date(now.getTime() - IDEMPOTENCY_KEEP_HOURS * HOUR_MS),
    usage: new Date(now.getTime() - usageDays * 24 * HOUR_MS),
  };
}

/** Each step's one batch (see lib/retention.ts for the order and db/repositories/retention.ts for the rules). */
export function retentionBatches(
  repo: RetentionRepository,
  cutoffs: RetentionCutoffs,
  batch = RETENTION_BATCH,
): Record<RetentionStep, () => Promise<number>> {
  return {
    deliveries: () => repo.deleteFinishedDeliveries(cutoffs.history, batch.rows, batch.attempts),
    fires: () => repo.deleteFires(cutoffs.history, batch.rows),
    runs: () => repo.deleteFinishedRuns(cutoffs.history, batch.runs),
    events: () => repo.deleteUndeliveredEvents(cutoffs.history, batch.rows),
    hook_receipts: () => repo.deleteHookReceipts(cutoffs.history, batch.rows),
    idempotency_keys: () => repo.deleteIdempotencyKeys(cutoffs.idempotency, batch.rows),
    rate_limits: () => repo.deleteEndedRateLimits(cutoffs.now, batch.rows),
    refresh_tokens: () => repo.deleteDeadRefreshTokens(cutoffs.now, batch.rows),
    missed_fires: () => repo.deleteMissedFires(cutoffs.history, batch.rows),
    schedule_corrections: () => repo.deleteScheduleCorrections(cutoffs.history, batch.rows),
    recoveries: () => repo.deleteFinishedRecoveries(cutoffs.history, batch.recoveries, batch.recoveryItems),
    thread_messages: () => repo.deleteOldThreadMessages(cutoffs.history, cutoffs.now, batch.rows),
    schedule_history: () => repo.deleteEndedScheduleVersions(cutoffs.history, batch.rows),
    usage_days: () => repo.deleteOldUsageDays(cutoffs.usage, batch.rows),
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
 * request, the attempts bound), so only an empty batch means done; the cutoffs are fixed, so one comes.
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
  const repo = createRetentionRepository(deps.db);

  return {
    /**
     * One step of retentionWorkflow: deletes that step's rows past their cutoffs (from the database's
     * clock when the call starts) in batches for up to `budgetMs`, heartbeating after each batch (a retry
     * resumes the count from the last heartbeat) and stopping between batches when cancelled (worker shutdown).
     */
    async deleteExpiredRows(input: { step: RetentionStep; budgetMs: number }): Promise<RetentionOutcome> {
      const ctx = Context.current();
      const resumed = (ctx.info.heartbeatDetails as { deleted?: number } | undefined)?.deleted ?? 0;
      const cutoffs = retentionCutoffs(await repo.now(), deps.config.retention.days, deps.config.retention.usageDays);
      return deleteInBatches(retentionBatches(repo, cutoffs)[input.step], {
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
