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

/**
 * A hit on a fixed window of at most `$3` hits (`$1` the counter's key, `$2` the window in ms), as CTEs
 * (`spent`, `hit`) and the subquery `counted` of its (hits, ttl_ms), for a statement that does more
 * (db/repositories/hooks.ts: the hook's lookup and its hit in one round trip). The counter is touched only
 * when `gate` (SQL over the statement's other CTEs) holds: no row for a hook that does not exist. A window
 * already full is not written again: under a flood, every request past the limit costs a read, not a
 * row-locked write, and exactly `$3` pass per window.
 */
export function hitUpTo(gate: string): { ctes: string; counted: string } {
  return {
    ctes: `spent AS (
        SELECT hits, reset_at FROM auth_rate_limits WHERE key = $1 AND reset_at > now() AND hits >= $3 AND (${gate})
      ), hit AS (${countHit(`WHERE (${gate}) AND NOT EXISTS (SELECT 1 FROM spent)`)})`,
    counted: `(SELECT hits, ${TTL_MS} FROM (SELECT hits, reset_at FROM hit UNION ALL SELECT hits + 1, reset_at FROM spent) AS c)`,
  };
}

/** Idempotency records and rate-limit counters (auth endpoints, public hooks): the request-level guards kept in Postgres. */
/** A key claimed alone (api/plugins/idempotency.ts, `callsTemporal`) without an answer is in progress this long at most. */
const DETACHED_CLAIM_SECONDS = 60;

export function createRequestGuardsRepository(db: Queryable) {
  return {
    /**
     * Claims (caller, key) for a new request, inside the transaction `q` that will also do the request's
     * work and store its response. Returns null when claimed now; otherwise the existing record, or one
     * with no status when another request holds the key right now (its transaction has not ended): the
     * claim takes a transaction-scoped advisory lock on (caller, key) without waiting, so a second request
     * never waits on the first's transaction. A record older than `ttlHours` is claimed afresh, and so is
     * one without a status older than DETACHED_CLAIM_SECONDS (a claim committed alone by a route that calls
     * Temporal, whose request died before its answer was stored); a younger one is a request in progress.
     */
    async claimIdempotencyKey(
      callerId: string,
      key: string,
      requestHash: string,
      ttlHours: number,
      q: Queryable = db,
    ): Promise<IdempotencyRow | null> {
      const { rows } = await q.query<IdempotencyRow & { state: 'claimed' | 'busy' | 'stored' }>(
        `WITH lock AS (
           SELECT pg_try_advisory_xact_lock(hashtextextended($1::uuid::text || ' ' || $2::text, 0)) AS held
         ), claimed AS (
           INSERT INTO idempotency_keys AS k (caller_id, key, request_hash)
           SELECT $1::uuid, $2::text, $3::text FROM lock WHERE held
           ON CONFLICT (caller_id, key) DO UPDATE
             SET request_hash = EXCLUDED.request_hash, status_code = NULL, response_body = NULL, created_at = now()
             WHERE k.created_at < now() - make_interval(hours => $4)
               OR (k.status_code IS NULL AND k.created_at < now() - interval '${DETACHED_CLAIM_SECONDS} seconds')
           RETURNING true
         )
         SELECT 'claimed' AS state, NULL AS request_hash, NULL::int AS status_code, NULL AS response_body FROM claimed
         UNION ALL
         SELECT 'busy', NULL, NULL, NULL FROM lock WHERE NOT held
         UNION ALL
         SELECT 'stored', request_hash, status_code, response_body FROM idempotency_keys
         WHERE caller_id = $1::uuid AND key = $2::text AND (SELECT held FROM lock) AND NOT EXISTS (SELECT 1 FROM claimed)`,
        [callerId, key, requestHash, ttlHours],
      );
      const row = rows[0];
      if (row?.state === 'claimed') return null;
      if (row?.state === 'busy') return { request_hash: requestHash, status_code: null, response_body: null };
      if (row) return row;
      // The lock was free, but the request that held it committed its record after this statement's
      // snapshot was taken: read it again with a fresh snapshot.
      const again = await q.query<IdempotencyRow>(
        `SELECT request_hash, status_code, response_body FROM idempotency_keys WHERE caller_id = $1 AND key = $2`,
        [callerId, key],
      );
      // Gone again (deleted by retention meanwhile): report it as still in flight.
      return again.rows[0] ?? { request_hash: requestHash, status_code: null, response_body: null };
    },

    /**
     * Whether (caller, key) has a stored response younger than `ttlHours`: a read, no claim and no lock
     * (the route preflight skips its checks for a request the idempotency hook will answer from it).
     */
    async hasStoredIdempotencyResponse(callerId: string, key: string, ttlHours: number, q: Queryable = db): Promise<boolean> {
      const { rowCount } = await q.query(
        `SELECT 1 FROM idempotency_keys
         WHERE caller_id = $1 AND key = $2 AND status_code IS NOT NULL AND created_at >= now() - make_interval(hours => $3)`,
        [callerId, key, ttlHours],
      );
      return rowCount === 1;
    },

    /** Stores the response, in the transaction of the claim and the request's work. */
    /** Frees a claimed key whose request stored no answer (it may be sent again at once). */
    async releaseIdempotencyKey(callerId: string, key: string, q: Queryable = db): Promise<void> {
      await q.query(`DELETE FROM idempotency_keys WHERE caller_id = $1 AND key = $2 AND status_code IS NULL`, [callerId, key]);
    },

    async completeIdempotencyKey(callerId: string, key: string, statusCode: number, body: string, q: Queryable = db): Promise<void> {
      await q.query(
        `UPDATE idempotency_keys SET status_code = $3, response_body = $4 WHERE caller_id = $1 AND key = $2`,
        [callerId, key, statusCode, body],
      );
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
      const { ctes, counted } = hitUpTo('true');
      const { rows } = await q.query<{ hits: number; ttl_ms: number }>(`WITH ${ctes} SELECT hits, ttl_ms FROM ${counted} AS counted`, [key, windowMs, max]);
      const row = rows[0]!;
      return { allowed: row.hits <= max, ttlMs: row.ttl_ms };
    },
  };
}
export type RequestGuardsRepository = ReturnType<typeof createRequestGuardsRepository>;
