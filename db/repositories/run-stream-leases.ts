import type { Queryable } from '../pool';

/**
 * The places of live run streams (GET /api/runs/:id/events), one row per open stream, shared by every API
 * process: RUN_STREAMS_PER_USER counts a user's unexpired rows. The process holding a stream renews its row;
 * the rows of a process that died stop counting when they expire.
 */
export function createRunStreamLeasesRepository(db: Queryable) {
  return {
    /** Serialises the openings of one user's streams until the transaction `q` ends (an advisory lock). */
    async lockUser(userId: string, q: Queryable): Promise<void> {
      await q.query(`SELECT pg_advisory_xact_lock(hashtext('run-streams'), hashtext($1))`, [userId]);
    },

    /**
     * Takes a place for the stream `id` when the user holds fewer than `max` unexpired ones; false when
     * they hold `max`. After lockUser in the same transaction: its snapshot then sees every place another
     * opening committed (READ COMMITTED takes one per statement).
     */
    async takeIfUnder(id: string, userId: string, max: number, ttlMs: number, q: Queryable): Promise<boolean> {
      const { rows } = await q.query(
        `INSERT INTO run_stream_leases (id, user_id, expires_at)
         SELECT $1, $2, now() + $4 * interval '1 millisecond'
         WHERE (SELECT count(*) FROM run_stream_leases WHERE user_id = $2 AND expires_at > now()) < $3
         RETURNING id`,
        [id, userId, max, ttlMs],
      );
      return rows.length === 1;
    },

    /**
     * Renews the places of a process's open streams for `ttlMs`, in one statement; a place that expired
     * meanwhile (the process stalled, or Postgres lost the unlogged table) is written again.
     */
    async renew(places: { id: string; userId: string }[], ttlMs: number, q: Queryable = db): Promise<void> {
      if (places.length === 0) return;
      await q.query(
        `INSERT INTO run_stream_leases (id, user_id, expires_at)
         SELECT id, user_id, now() + $3 * interval '1 millisecond' FROM unnest($1::uuid[], $2::uuid[]) AS p (id, user_id)
         ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
        [places.map((p) => p.id), places.map((p) => p.userId), ttlMs],
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
