import type { Queryable } from '../pool';

export interface IdempotencyRow {
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
}

/**
 * A fixed-window hit on the counter `$1` (window `$2` ms), written only when `where` lets its one row
 * through: a new window, or one more hit in the current one. Returns (hits, reset_at).
 */
const countHit = (where: string) => `INSERT INTO auth_rate_limits AS r (key, hits, reset_at)
  SELECT $1, 1, now() + make_interval(secs => $2::double precision / 1000) ${where}
  ON CONFLICT (key) DO UPDATE SET
    hits = CASE WHEN r.reset_at <= now() THEN 1 ELSE r.hits + 1 END,
    reset_at = CASE WHEN r.reset_at <= now() THEN EXCLUDED.reset_at ELSE r.reset_at END
  RETURNING hits, reset_at`;

const TTL_MS = `GREATEST(0, CEIL(EXTRACT(EPOCH FROM (reset_at - now())) * 1000))::bigint AS ttl_ms`;

/** Idempotency records and rate-limit counters (auth endpoints, public hooks): the request-level guards kept in Postgres. */
export function createRequestGuardsRepository(db: Queryable) {
  return {
    /**
     * Claims (caller, key) for a new request. Returns null when claimed now; otherwise the existing
     * record. A record older than `ttlHours` is treated as gone and claimed afresh.
     */
    async claimIdempotencyKey(
      callerId: string,
      key: string,
      requestHash: string,
      ttlHours: number,
      q: Queryable = db,
    ): Promise<IdempotencyRow | null> {
      const { rows } = await q.query<IdempotencyRow & { claimed: boolean }>(
        `WITH claimed AS (
           INSERT INTO idempotency_keys AS k (caller_id, key, request_hash) VALUES ($1, $2, $3)
           ON CONFLICT (caller_id, key) DO UPDATE
             SET request_hash = EXCLUDED.request_hash, status_code = NULL, response_body = NULL, created_at = now()
             WHERE k.created_at < now() - make_interval(hours => $4)
           RETURNING true AS claimed
         )
         SELECT true AS claimed, NULL::text AS request_hash, NULL::int AS status_code, NULL::text AS response_body
         FROM claimed
         UNION ALL
         SELECT false, request_hash, status_code, response_body FROM idempotency_keys
         WHERE caller_id = $1 AND key = $2 AND NOT EXISTS (SELECT 1 FROM claimed)`,
        [callerId, key, requestHash, ttlHours],
      );
      const row = rows[0];
      if (row?.claimed) return null;
      if (row) return row;
      // The key was claimed by a transaction that committed after this statement's snapshot:
      // read it again with a fresh snapshot.
      const again = await q.query<IdempotencyRow>(
        `SELECT request_hash, status_code, response_body FROM idempotency_keys WHERE caller_id = $1 AND key = $2`,
        [callerId, key],
      );
      // Gone again (its first request failed and released it): report it as still in flight.
      return again.rows[0] ?? { request_hash: requestHash, status_code: null, response_body: null };
    },

    async completeIdempotencyKey(callerId: string, key: string, statusCode: number, body: string, q: Queryable = db): Promise<void> {
      await q.query(
        `UPDATE idempotency_keys SET status_code = $3, response_body = $4 WHERE caller_id = $1 AND key = $2`,
        [callerId, key, statusCode, body],
      );
    },

    async releaseIdempotencyKey(callerId: string, key: string, q: Queryable = db): Promise<void> {
      await q.query(`DELETE FROM idempotency_keys WHERE caller_id = $1 AND key = $2 AND status_code IS NULL`, [callerId, key]);
    },

    /** One atomic fixed-window hit: returns the count in the current window and ms until it resets. */
    async hitRateLimit(key: string, windowMs: number, q: Queryable = db): Promise<{ hits: number; ttlMs: number }> {
      const { rows } = await q.query<{ hits: number; ttl_ms: number }>(`WITH hit AS (${countHit('')}) SELECT hits, ${TTL_MS} FROM hit`, [key, windowMs]);
      const row = rows[0]!;
      return { hits: row.hits, ttlMs: row.ttl_ms };
    },

    /** Gives back one hit of the current window (a no-op once the window has passed). */
    async refundRateLimit(key: string, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE auth_rate_limits SET hits = hits - 1 WHERE key = $1 AND hits > 0 AND reset_at > now()`, [key]);
    },

    /**
     * A hit on a fixed window of at most `max` (the public hooks' limit): the same counter, but a window
     * already full is not written again. Under a flood, every request past the limit costs a read, not a
     * row-locked write: no queue on the hook's row. The write that counts a request is still the one
     * atomic upsert, so exactly `max` pass per window.
     */
    async hitRateLimitUpTo(key: string, windowMs: number, max: number, q: Queryable = db): Promise<{ allowed: boolean; ttlMs: number }> {
      const { rows } = await q.query<{ hits: number; ttl_ms: number }>(
        `WITH spent AS (
           SELECT hits, reset_at FROM auth_rate_limits WHERE key = $1 AND reset_at > now() AND hits >= $3
         ), hit AS (${countHit('WHERE NOT EXISTS (SELECT 1 FROM spent)')})
         SELECT hits, ${TTL_MS} FROM (SELECT hits, reset_at FROM hit UNION ALL SELECT hits + 1, reset_at FROM spent) AS counted`,
        [key, windowMs, max],
      );
      const row = rows[0]!;
      return { allowed: row.hits <= max, ttlMs: row.ttl_ms };
    },
  };
}
export type RequestGuardsRepository = ReturnType<typeof createRequestGuardsRepository>;
