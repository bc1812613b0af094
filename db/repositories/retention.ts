import type { Queryable } from '../pool';

/**
 * Retention's deletes (README "Retention"). Each call deletes one batch of at most `limit` rows, oldest
 * first, in one statement, so in its own short transaction. The same shape throughout:
 *
 *   DELETE FROM t WHERE <key> IN (SELECT <key> FROM t WHERE <old and final> ORDER BY … LIMIT n FOR UPDATE SKIP LOCKED)
 *
 * - the inner SELECT uses the index of migration 8 and stops after `limit` rows;
 * - FOR UPDATE re-checks the condition on the row's newest version before it is deleted (a delivery a
 *   manual retry has just made pending again is not taken), and SKIP LOCKED never waits for a row a
 *   request holds: that row is left for the next run, and no request waits long for retention;
 * - only rows in a final state are deleted, whatever their age: a `pending` delivery, a `queued` or
 *   `running` run, and an event a remaining delivery refers to stay.
 * Ages are measured with the database's clock (`now()`), as every other comparison of these columns.
 * Each returns how many rows it deleted.
 */
export function createRetentionRepository(db: Queryable) {
  const deleted = async (sql: string, params: unknown[]) => (await db.query(sql, params)).rowCount ?? 0;

  return {
    /**
     * Finished deliveries older than `days`, with their attempts (ON DELETE CASCADE). A delivery has one
     * attempt per delay of the retry schedule per generation, more after manual retries: a batch takes
     * deliveries until their `attempts` add up to `maxAttempts` (at least one delivery), so the cascade
     * is bounded too.
     */
    deleteFinishedDeliveries(days: number, limit: number, maxAttempts: number): Promise<number> {
      return deleted(
        `WITH candidates AS (
           SELECT id, created_at, attempts FROM deliveries
           WHERE created_at < now() - make_interval(days => $1) AND status IN ('succeeded', 'failed', 'cancelled')
           ORDER BY created_at LIMIT $2
           FOR UPDATE SKIP LOCKED
         ), bounded AS (
           SELECT id, sum(attempts) OVER (ORDER BY created_at, id) - attempts AS attempts_before FROM candidates
         )
         DELETE FROM deliveries WHERE id IN (SELECT id FROM bounded WHERE attempts_before < $3)`,
        [days, limit, maxAttempts],
      );
    },

    /** Fires older than `days`. Nothing refers to a fire (a run keeps its fire id as a plain value). */
    deleteFires(days: number, limit: number): Promise<number> {
      return deleted(
        `DELETE FROM fires WHERE id IN (
           SELECT id FROM fires WHERE created_at < now() - make_interval(days => $1)
           ORDER BY created_at LIMIT $2
           FOR UPDATE SKIP LOCKED)`,
        [days, limit],
      );
    },

    /**
     * Runs that ended (`succeeded`, `failed`) more than `days` after they were created; `queued` and
     * `running` ones stay, whatever their age. A fire that still refers to one loses its `runId`
     * (ON DELETE SET NULL, indexed); what belongs to a run alone (its steps) goes with it (CASCADE), which
     * is why run batches are smaller than the others.
     */
    deleteFinishedRuns(days: number, limit: number): Promise<number> {
      return deleted(
        `DELETE FROM runs WHERE id IN (
           SELECT id FROM runs
           WHERE created_at < now() - make_interval(days => $1) AND status IN ('succeeded', 'failed')
           ORDER BY created_at LIMIT $2
           FOR UPDATE SKIP LOCKED)`,
        [days, limit],
      );
    },

    /**
     * Events older than `days` that no delivery refers to any more (finished deliveries were deleted
     * before: see lib/retention.ts), so the cascade into deliveries is empty and an event with a pending
     * delivery stays. Fires that refer to one lose their `eventId` (ON DELETE SET NULL, indexed).
     */
    deleteUndeliveredEvents(days: number, limit: number): Promise<number> {
      return deleted(
        `DELETE FROM events WHERE id IN (
           SELECT e.id FROM events e
           WHERE e.created_at < now() - make_interval(days => $1)
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)
           ORDER BY e.created_at LIMIT $2
           FOR UPDATE OF e SKIP LOCKED)`,
        [days, limit],
      );
    },

    /** Receipts of signed incoming webhook requests older than `days`. */
    deleteHookReceipts(days: number, limit: number): Promise<number> {
      return deleted(
        `DELETE FROM hook_receipts WHERE (webhook_id, message_id) IN (
           SELECT webhook_id, message_id FROM hook_receipts WHERE created_at < now() - make_interval(days => $1)
           ORDER BY created_at LIMIT $2
           FOR UPDATE SKIP LOCKED)`,
        [days, limit],
      );
    },

    /**
     * Idempotency records older than `hours`: no longer replayed (a claim of the same key takes them
     * over), so nothing reads them. One a request is taking over right now is locked, and skipped.
     */
    deleteIdempotencyKeys(hours: number, limit: number): Promise<number> {
      return deleted(
        `DELETE FROM idempotency_keys WHERE (caller_id, key) IN (
           SELECT caller_id, key FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)
           ORDER BY created_at LIMIT $2
           FOR UPDATE SKIP LOCKED)`,
        [hours, limit],
      );
    },

    /**
     * Rate-limit counters (`auth_rate_limits`: auth addresses, login emails and every other counter kept
     * there) whose window has ended: the next hit would start a new window at 1 anyway.
     */
    deleteEndedRateLimits(limit: number): Promise<number> {
      return deleted(
        `DELETE FROM auth_rate_limits WHERE key IN (
           SELECT key FROM auth_rate_limits WHERE reset_at <= now()
           ORDER BY reset_at LIMIT $1
           FOR UPDATE SKIP LOCKED)`,
        [limit],
      );
    },

    /**
     * Refresh tokens that can no longer do anything: expired, or revoked. Presenting one answers the same
     * 401 whether it exists or not, and a revoked family is revoked whole (under its lock), so no token of
     * it can be rotated again. Rotated tokens that have not expired stay: presenting one is how a leak is
     * detected (the family is then revoked), so it must exist until it expires.
     */
    deleteDeadRefreshTokens(limit: number): Promise<number> {
      return deleted(
        `DELETE FROM refresh_tokens WHERE id IN (
           SELECT id FROM refresh_tokens WHERE expires_at <= now() OR revoked_at IS NOT NULL
           LIMIT $1
           FOR UPDATE SKIP LOCKED)`,
        [limit],
      );
    },
  };
}
export type RetentionRepository = ReturnType<typeof createRetentionRepository>;
