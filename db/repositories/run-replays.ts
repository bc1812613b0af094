import type { Queryable } from '../pool';
import type { RunRow } from './runs';

/** A replay of an agent's failed runs (docs/api.md § Rerun and replay; migration 26). */
export interface RunReplayRow {
  id: string;
  account_id: string;
  agent_id: string;
  count: number;
  started: number;
  created_at: Date;
  finished_at: Date | null;
}

const COLUMNS = `id, account_id, agent_id, count, started, created_at, finished_at`;

/** What a replay's batch reads of a run it reruns. */
export type ReplayRun = Pick<RunRow, 'id' | 'account_id' | 'agent_id' | 'input' | 'thread_id'>;

/** One run a replay's batch reruns; `run` is null when it was deleted meanwhile (it is skipped). */
export interface ReplayItem {
  ord: number;
  run: ReplayRun | null;
}

/** The replays of agents' failed runs, and their items (workflows/replay.ts works through them). */
export function createRunReplaysRepository(db: Queryable) {
  return {
    /**
     * How long until the agent may have its next replay (RECOVER_INTERVAL after its last one was asked for),
     * in ms; 0 when it may now. Read under the agent's row lock, so concurrent requests see each other's.
     */
    async msUntilNextReplay(agentId: string, intervalMs: number, q: Queryable = db): Promise<number> {
      const { rows } = await q.query<{ wait_ms: string }>(
        `SELECT coalesce(ceil(extract(epoch FROM max(created_at) + $2 * interval '1 millisecond' - now()) * 1000), 0)::bigint AS wait_ms
           FROM run_replays WHERE agent_id = $1 AND created_at > now() - $2 * interval '1 millisecond'`,
        [agentId, intervalMs],
      );
      return Number(rows[0]!.wait_ms);
    },

    /**
     * A replay of the agent's runs that failed and were created in [since, until): the oldest `limit` of them,
     * in created order, are its items; `count` says how many.
     */
    async create(q: Queryable, r: { accountId: string; agentId: string; since: Date; until: Date; limit: number }): Promise<RunReplayRow> {
      const { rows } = await q.query<RunReplayRow>(
        `WITH chosen AS (
           SELECT id, row_number() OVER (ORDER BY created_at, id)::int AS ord FROM (
             SELECT id, created_at FROM runs
              WHERE agent_id = $2 AND account_id = $1 AND status = 'failed' AND created_at >= $3 AND created_at < $4
              ORDER BY created_at, id LIMIT $5) AS r
         ), replay AS (
           INSERT INTO run_replays (account_id, agent_id, status, since, until, count, finished_at)
           SELECT $1, $2, 'failed', $3, $4, count(*)::int, CASE WHEN count(*) = 0 THEN now() END FROM chosen
           RETURNING ${COLUMNS}
         ), items AS (
           INSERT INTO run_replay_items (replay_id, ord, run_id) SELECT replay.id, chosen.ord, chosen.id FROM replay, chosen
         )
         SELECT * FROM replay`,
        [r.accountId, r.agentId, r.since, r.until, r.limit],
      );
      return rows[0]!;
    },

    async find(accountId: string, agentId: string, id: string, q: Queryable = db): Promise<RunReplayRow | null> {
      const { rows } = await q.query<RunReplayRow>(`SELECT ${COLUMNS} FROM run_replays WHERE id = $1 AND account_id = $2 AND agent_id = $3`, [id, accountId, agentId]);
      return rows[0] ?? null;
    },

    /** The replay's row, locked for its next batch; null when it is gone (its agent was deleted). */
    async findForWork(id: string, q: Queryable): Promise<RunReplayRow | null> {
      const { rows } = await q.query<RunReplayRow>(`SELECT ${COLUMNS} FROM run_replays WHERE id = $1 FOR UPDATE`, [id]);
      return rows[0] ?? null;
    },

    /** The replay's next `limit` items not done yet, in order, each with its run (null when deleted meanwhile). */
    async nextItems(replayId: string, limit: number, q: Queryable): Promise<ReplayItem[]> {
      const { rows } = await q.query<{ ord: number; id: string | null } & Omit<ReplayRun, 'id'>>(
        `SELECT i.ord, r.id, r.account_id, r.agent_id, r.input, r.thread_id
           FROM run_replay_items i LEFT JOIN runs r ON r.id = i.run_id
          WHERE i.replay_id = $1 AND NOT i.done ORDER BY i.ord LIMIT $2`,
        [replayId, limit],
      );
      return rows.map(({ ord, id, ...run }) => ({ ord, run: id === null ? null : { id, ...run } }));
    },

    /** Items done: each with the rerun started for it (null: skipped); the replay's `started` counts them, and it is finished when none is left. */
    /**
     * A replay whose batch failed for good (workflows/replay.ts): it ends where it stopped, `started` short of
     * `count`, which GET …/replays/:id reads as `failed`. Nothing when it had already ended.
     */
    async markStopped(replayId: string, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE run_replays SET finished_at = now() WHERE id = $1 AND finished_at IS NULL`, [replayId]);
    },

    async recordBatch(replayId: string, done: { ord: number; rerunId: string | null }[], q: Queryable): Promise<void> {
      await q.query(
        `WITH marked AS (
           UPDATE run_replay_items i SET done = true, rerun_id = d.rerun_id
             FROM jsonb_to_recordset($2::jsonb) AS d(ord int, rerun_id uuid)
            WHERE i.replay_id = $1 AND i.ord = d.ord AND NOT i.done
           RETURNING i.ord
         )
         UPDATE run_replays SET started = started + (SELECT count(*) FROM marked)::int,
                finished_at = CASE WHEN started + (SELECT count(*) FROM marked)::int >= count THEN now() ELSE finished_at END
          WHERE id = $1`,
        [replayId, JSON.stringify(done.map((d) => ({ ord: d.ord, rerun_id: d.rerunId })))],
      );
    },
  };
}
export type RunReplaysRepository = ReturnType<typeof createRunReplaysRepository>;
