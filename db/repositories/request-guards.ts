import type { Queryable } from '../pool';

export interface IdempotencyRow {
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
}

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
      const { rows } = await q.query<{ hits: number; ttl_ms: number }>(
        `INSERT INTO auth_rate_limits AS r (key, hits, reset_at)
         VALUES ($1, 1, now() + make_interval(secs => $2::double precision / 1000))
         ON CONFLICT (key) DO UPDATE SET
           hits = CASE WHEN r.reset_at <= now() THEN 1 ELSE r.hits + 1 END,
           reset_at = CASE WHEN r.reset_at <= now() THEN EXCLUDED.reset_at ELSE r.reset_at END
         RETURNING hits, GREATEST(0, CEIL(EXTRACT(EPOCH FROM (reset_at - now())) * 1000))::bigint AS ttl_ms`,
        [key, windowMs],
      );
      const row = rows[0]!;
      return { hits: row.hits, ttlMs: row.ttl_ms };
    },
  };
}
export type RequestGuardsRepository = ReturnType<typeof createRequestGuardsRepository>;
