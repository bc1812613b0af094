import type { Queryable } from '../pool';

/**
 * The places of live run streams (GET /api/runs/:id/events), one row per open stream, shared by every API
 * process: RUN_STREAMS_PER_USER counts a user's unexpired rows, RUN_STREAMS_PER_ACCOUNT an account's. The process
 * holding a stream renews its row; the rows of a process that died stop counting when they expire.
 */
export function createRunStreamLeasesRepository(db: Queryable) {
  return {
    /** Serialises the openings of one user's streams, and of one account's, until the transaction `q` ends (advisory locks, user first). */
    async lockUserAndAccount(userId: string, accountId: string, q: Queryable): Promise<void> {
      await q.query(`SELECT pg_advisory_xact_lock(hashtext('run-streams'), hashtext($1))`, [userId]);
      await q.query(`SELECT pg_advisory_xact_lock(hashtext('run-streams-account'), hashtext($1))`, [accountId]);
    },

    /**
     * Takes a place for the stream `id` when the user holds fewer than `perUser` unexpired ones and the account
     * fewer than `perAccount`; otherwise answers which is full. After lockUserAndAccount in the same transaction:
     * its snapshot then sees every place another opening committed (READ COMMITTED takes one per statement).
     */
    async takeIfUnder(
      place: { id: string; userId: string; accountId: string },
      limits: { perUser: number; perAccount: number },
      ttlMs: number,
      q: Queryable,
    ): Promise<'taken' | 'user' | 'account'> {
      const { rows } = await q.query<{ user_full: boolean; account_full: boolean; taken: boolean }>(
        `WITH counts AS (
           SELECT (SELECT count(*) FROM run_stream_leases WHERE user_id = $2 AND expires_at > now()) >= $4 AS user_full,
                  (SELECT count(*) FROM run_stream_leases WHERE account_id = $3 AND expires_at > now()) >= $5 AS account_full
         ), taken AS (
           INSERT INTO run_stream_leases (id, user_id, account_id, expires_at)
           SELECT $1, $2, $3, now() + $6 * interval '1 millisecond' FROM counts WHERE NOT user_full AND NOT account_full
           RETURNING id
         )
         SELECT user_full, account_full, EXISTS (SELECT 1 FROM taken) AS taken FROM counts`,
        [place.id, place.userId, place.accountId, limits.perUser, limits.perAccount, ttlMs],
      );
      const row = rows[0]!;
      return row.taken ? 'taken' : row.user_full ? 'user' : 'account';
    },

    /**
     * Renews the places of a process's open streams for `ttlMs`, in one statement; a place that expired
     * meanwhile (the process stalled, or Postgres lost the unlogged table) is written again.
     */
    async renew(places: { id: string; userId: string; accountId: string }[], ttlMs: number, q: Queryable = db): Promise<void> {
      if (places.length === 0) return;
      await q.query(
        `INSERT INTO run_stream_leases (id, user_id, account_id, expires_at)
         SELECT id, user_id, account_id, now() + $4 * interval '1 millisecond'
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS p (id, user_id, account_id)
         ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
        [places.map((p) => p.id), places.map((p) => p.userId), places.map((p) => p.accountId), ttlMs],
      );
    },

    /** Gives a place back (its stream ended). */
    async release(id: string, q: Queryable = db): Promise<void> {
      await q.query(`DELETE FROM run_stream_leases WHERE id = $1`, [id]);
    },

    /** Deletes up to `limit` expired places (left by processes that died); answers how many. */
    async deleteExpired(limit: number, q: Queryable = db): Promise<number> {
      const { rowCount } = await q.query(
        `DELETE FROM run_stream_leases WHERE id IN (
           SELECT id FROM run_stream_leases WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
        [limit],
      );
      return rowCount ?? 0;
    },
  };
}
export type RunStreamLeasesRepository = ReturnType<typeof createRunStreamLeasesRepository>;
