import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

export type RunStatus = 'queued' | 'running' | 'waiting' | 'succeeded' | 'failed';
/** Which executor made a run: the agent's tools in order, or a language model calling them. */
export type RunExecutor = 'tools' | 'model';

export interface RunRow {
  id: string;
  account_id: string;
  agent_id: string;
  trigger_id: string | null;
  fire_id: string | null;
  status: RunStatus;
  input: unknown;
  output: unknown;
  error: string | null;
  chain_depth: number;
  thread_id: string | null;
  executor: RunExecutor | null;
  /** Its usage so far (bigint columns: pg answers strings): tokens of its model calls, tool steps made. */
  prompt_tokens: string;
  completion_tokens: string;
  tool_calls: number;
  /** The run this one reruns (null when none, or when that run was deleted) and the step it went on from (migration 26). */
  rerun_of_run_id: string | null;
  rerun_from_step: number | null;
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const RUN_COLUMNS = `id, account_id, agent_id, trigger_id, fire_id, status, input, output, error, chain_depth,
  thread_id, executor, prompt_tokens, completion_tokens, tool_calls, rerun_of_run_id, rerun_from_step, started_at, finished_at, created_at, updated_at`;

export interface NewRun {
  accountId: string;
  agentId: string;
  input: unknown;
  chainDepth?: number;
  triggerId?: string | null;
  fireId?: string | null;
  threadId?: string | null;
}

/** `runs.started_at` (or another column) within the last `$n` milliseconds. */
const withinMs = (column: string, param: number) => `${column} > now() - $${param}::bigint * interval '1 millisecond'`;

/** Run `r` holds a slot: running, and started within `$holdParam` milliseconds. */
const holdsSlot = (r: string, holdParam: number) => `${r}.status = 'running' AND ${withinMs(`${r}.started_at`, holdParam)}`;

/** Run `r` is in line ahead of run `me`: queued before it, not parked, checked in within `$placeParam` milliseconds. */
const inLineAhead = (r: string, me: string, placeParam: number) =>
  `${r}.status = 'queued' AND (${r}.created_at, ${r}.id) < (${me}.created_at, ${me}.id)
   AND NOT ${r}.parked AND ${withinMs(`coalesce(${r}.waiting_at, ${r}.created_at)`, placeParam)}`;

export function createRunsRepository(db: Queryable) {
  return {
    /** Only the row (status queued): the run executes when its writer also calls startRun (engine/outbox/starts.ts). */
    async insertRun(r: NewRun, q: Queryable = db): Promise<RunRow> {
      const { rows } = await q.query<RunRow>(
        `INSERT INTO runs (account_id, agent_id, trigger_id, fire_id, input, chain_depth, thread_id) VALUES ($1, $2, $3, $4, $5, $6, $7)
         RETURNING ${RUN_COLUMNS}`,
        [r.accountId, r.agentId, r.triggerId ?? null, r.fireId ?? null, JSON.stringify(r.input ?? null), r.chainDepth ?? 0, r.threadId ?? null],
      );
      return rows[0]!;
    },

    async findRun(id: string, q: Queryable = db): Promise<RunRow | null> {
      const { rows } = await q.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },

    /** Whether the account has the run (a live stream's opening: none of its input or output is read). */
    async accountHasRun(accountId: string, id: string, q: Queryable = db): Promise<boolean> {
      const { rows } = await q.query(`SELECT 1 FROM runs WHERE id = $1 AND account_id = $2`, [id, accountId]);
      return rows.length === 1;
    },

    /** Only the run's status (a live stream's check after each wake-up: none of its input or output is read). */
    async findRunStatus(id: string, q: Queryable = db): Promise<RunStatus | null> {
      const { rows } = await q.query<{ status: RunStatus }>(`SELECT status FROM runs WHERE id = $1`, [id]);
      return rows[0]?.status ?? null;
    },

    /** Null for a run of another account (the API answers 404 either way). */
    async findAccountRun(accountId: string, id: string, q: Queryable = db): Promise<RunRow | null> {
      const { rows } = await q.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 AND account_id = $2`, [id, accountId]);
      return rows[0] ?? null;
    },

    /** An agent's runs, newest first. */
    async listAgentRuns(accountId: string, agentId: string, page: PageRequest, q: Queryable = db): Promise<Page<RunRow>> {
      const k = keysetTail(page, 3);
      const { rows } = await q.query<RunRow & { page_created_at: string }>(
        `SELECT ${RUN_COLUMNS}, ${PAGE_KEY_COLUMNS} FROM runs WHERE agent_id = $1 AND account_id = $2 ${k.where} ${k.tail}`,
        [agentId, accountId, ...k.params],
      );
      return toPage(rows, page.limit, ({ page_created_at: _key, ...run }) => run);
    },

    /**
     * A page of the account's runs across its agents, newest first, narrowed to one agent and/or one status.
     * With an agent it reads that agent's index (runs_page); without, the account's (runs_account_page).
     */
    async listAccountRuns(accountId: string, filter: { agentId?: string; status?: string }, page: PageRequest, q: Queryable = db): Promise<Page<RunRow>> {
      const k = keysetTail(page, 4);
      const { rows } = await q.query<RunRow & { page_created_at: string }>(
        `SELECT ${RUN_COLUMNS}, ${PAGE_KEY_COLUMNS} FROM runs
         WHERE account_id = $1 AND ($2::uuid IS NULL OR agent_id = $2) AND ($3::text IS NULL OR status = $3)
         ${k.where} ${k.tail}`,
        [accountId, filter.agentId ?? null, filter.status ?? null, ...k.params],
      );
      return toPage(rows, page.limit, ({ page_created_at: _key, ...run }) => run);
    },

    /**
     * Serialises the slot decisions of one account's runs (a transaction-scoped advisory lock, per account:
     * accounts never wait for each other).
     */
    async lockAccountRunSlots(accountId: string, q: Queryable = db): Promise<void> {
      await q.query(`SELECT pg_advisory_xact_lock(hashtext('run-slots'), hashtext($1))`, [accountId]);
    },

    /** The same lock, shared: decisions that need no count of the others (engine/runs/run-line.ts `whenAllFit`) hold it side by side. */
    async lockAccountRunSlotsShared(accountId: string, q: Queryable = db): Promise<void> {
      await q.query(`SELECT pg_advisory_xact_lock_shared(hashtext('run-slots'), hashtext($1))`, [accountId]);
    },

    /** How many of the account's runs are open (queued, parked or running, however old), counted up to `cap`. */
    async countOpenRuns(accountId: string, cap: number, q: Queryable = db): Promise<number> {
      const { rows } = await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT 1 FROM runs WHERE account_id = $1 AND status IN ('queued', 'running') LIMIT $2) AS open`,
        [accountId, cap],
      );
      return rows[0]!.n;
    },

    /**
     * How many of the account's runs hold a slot: running, and started within `holdMs` (a run whose
     * workflow is gone cannot hold a slot forever).
     */
    async countRunningRuns(accountId: string, holdMs: number, q: Queryable = db): Promise<number> {
      const { rows } = await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM runs r WHERE r.account_id = $1 AND ${holdsSlot('r', 2)}`,
        [accountId, holdMs],
      );
      return rows[0]!.n;
    },

    /**
     * How many queued runs of the same account, created before this one, are still in line — checked in
     * (or created) within `placeMs` — counted up to `cap`.
     */
    async countQueuedAhead(run: Pick<RunRow, 'id' | 'account_id'>, placeMs: number, cap: number, q: Queryable = db): Promise<number> {
      const { rows } = await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (
           SELECT 1 FROM runs r, runs me
            WHERE me.id = $2 AND r.account_id = $1 AND ${inLineAhead('r', 'me', 3)}
            LIMIT $4) AS older`,
        [run.account_id, run.id, placeMs, cap],
      );
      return rows[0]!.n;
    },

    /**
     * The run with where it stands in its account's line, in one read (without the lock: a run's quick look
     * before its locked decision): `running`, countRunningRuns of its account; `ahead`, countQueuedAhead of
     * it, up to `cap`. Null when the run is gone.
     */
    async findRunInLine(
      id: string,
      line: { placeMs: number; holdMs: number; cap: number },
      q: Queryable = db,
    ): Promise<{ run: RunRow; running: number; ahead: number } | null> {
      const { rows } = await q.query<RunRow & { line_running: number; line_ahead: number }>(
        `SELECT ${RUN_COLUMNS},
           (SELECT count(*)::int FROM runs o WHERE o.account_id = me.account_id AND ${holdsSlot('o', 3)}) AS line_running,
           (SELECT count(*)::int FROM (
              SELECT 1 FROM runs o WHERE o.account_id = me.account_id AND ${inLineAhead('o', 'me', 2)} LIMIT $4
            ) AS older) AS line_ahead
         FROM runs me WHERE me.id = $1`,
        [id, line.placeMs, line.holdMs, line.cap],
      );
      const row = rows[0];
      if (!row) return null;
      const { line_running, line_ahead, ...run } = row;
      return { run, running: line_running, ahead: line_ahead };
    },

    /** findRunForUpdate with its agent's status (null when the agent is gone), in one read. */
    async findRunForUpdateWithAgent(id: string, q: Queryable = db): Promise<{ run: RunRow; agentStatus: string | null } | null> {
      const { rows } = await q.query<RunRow & { agent_status: string | null }>(
        `SELECT ${RUN_COLUMNS.split(',').map((c) => `r.${c.trim()}`).join(', ')}, a.status AS agent_status
           FROM runs r LEFT JOIN agents a ON a.id = r.agent_id AND a.account_id = r.account_id
          WHERE r.id = $1 FOR UPDATE OF r`,
        [id],
      );
      const row = rows[0];
      if (!row) return null;
      const { agent_status, ...run } = row;
      return { run, agentStatus: agent_status };
    },

    /** A queued run's check-in: it is still waiting for a slot, so it keeps its place in line. */
    async markRunWaiting(id: string, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE runs SET waiting_at = now() WHERE id = $1 AND status = 'queued'`, [id]);
    },

    /**
     * Whether the account's line is full for a new run: at least `limit` of its other runs parked, queued in
     * line (see countQueuedAhead) or holding a slot (running, started within `holdMs`). Read without the
     * account's lock: a race costs at most a workflow that waits for its slot, as every run did before runs
     * were parked.
     */
    async accountRunLineFull(accountId: string, exceptId: string, limit: number, placeMs: number, holdMs: number, q: Queryable = db): Promise<boolean> {
      const { rows } = await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (
           SELECT 1 FROM runs
            WHERE account_id = $1 AND id <> $2
              AND ((status = 'queued' AND (parked OR ${withinMs('coalesce(waiting_at, created_at)', 4)}))
                   OR (status = 'running' AND ${withinMs('started_at', 5)}))
            LIMIT $3) AS line`,
        [accountId, exceptId, limit, placeMs, holdMs],
      );
      return rows[0]!.n >= limit;
    },

    /** A queued run waits in Postgres, without a workflow, until engine/runs/run-line.ts gives it one. */
    async parkRun(id: string, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE runs SET parked = true WHERE id = $1 AND status = 'queued'`, [id]);
    },

    /** How many of the account's queued runs have a workflow waiting for a slot (in line: see countQueuedAhead), up to `cap`. */
    async countWaitingRuns(accountId: string, placeMs: number, cap: number, q: Queryable = db): Promise<number> {
      const { rows } = await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (
           SELECT 1 FROM runs
            WHERE account_id = $1 AND status = 'queued' AND NOT parked AND ${withinMs('coalesce(waiting_at, created_at)', 2)}
            LIMIT $3) AS waiting`,
        [accountId, placeMs, cap],
      );
      return rows[0]!.n;
    },

    /** The account's `n` oldest parked runs, unparked (with a place in line from now), for their workflows to start. */
    async unparkRuns(accountId: string, n: number, q: Queryable = db): Promise<RunRow[]> {
      const { rows } = await q.query<RunRow>(
        `UPDATE runs SET parked = false, waiting_at = now()
          WHERE id IN (SELECT id FROM runs WHERE account_id = $1 AND parked AND status = 'queued'
                        ORDER BY created_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING ${RUN_COLUMNS}`,
        [accountId, n],
      );
      return rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id));
    },

    /** Whether the account has parked runs (read without a lock: a quick look before taking it). */
    async hasParkedRuns(accountId: string, q: Queryable = db): Promise<boolean> {
      const { rows } = await q.query<{ found: boolean }>(`SELECT EXISTS (SELECT 1 FROM runs WHERE account_id = $1 AND parked) AS found`, [accountId]);
      return rows[0]!.found;
    },

    /** Accounts that have parked runs (up to `limit` of them). */
    async accountsWithParkedRuns(limit: number, q: Queryable = db): Promise<string[]> {
      const { rows } = await q.query<{ account_id: string }>(`SELECT DISTINCT account_id FROM runs WHERE parked LIMIT $1`, [limit]);
      return rows.map((r) => r.account_id);
    },

    /**
     * The first `limit` queued runs of the account waiting for a slot — their workflow asked and was told to
     * wait (checked in within `placeMs`) —, oldest first. A run that has not asked yet is not among them: it
     * asks on its own, and waking it would only cost a signal (a burst's every end signalling every run not
     * yet begun made the signals grow as the square of the burst).
     */
    async nextQueuedRuns(accountId: string, placeMs: number, limit: number, q: Queryable = db): Promise<string[]> {
      const { rows } = await q.query<{ id: string }>(
        `SELECT id FROM runs
          WHERE account_id = $1 AND status = 'queued' AND NOT parked AND waiting_at IS NOT NULL AND ${withinMs('waiting_at', 2)}
          ORDER BY created_at, id LIMIT $3`,
        [accountId, placeMs, limit],
      );
      return rows.map((r) => r.id);
    },

    /**
     * A run that has no workflow cancelled: failed with `error`, and out of its account's line. `status`: the
     * state it is ended from (queued: parked, or its start not handed off yet; running: its workflow is gone).
     * Null when it is no longer in that state (its workflow began it meanwhile, or it ended).
     */
    async cancelRunWithoutWorkflow(accountId: string, id: string, status: 'queued' | 'running' | 'waiting', error: string, q: Queryable = db): Promise<RunRow | null> {
      const { rows } = await q.query<RunRow>(
        `UPDATE runs SET status = 'failed', error = $4, parked = false, finished_at = now(), waiting_at = NULL, updated_at = now()
         WHERE id = $1 AND account_id = $2 AND status = $3
         RETURNING ${RUN_COLUMNS}`,
        [id, accountId, status, error],
      );
      return rows[0] ?? null;
    },

    /** Locks the run's row for its begin or end; null when it is gone. */
    async findRunForUpdate(id: string, q: Queryable = db): Promise<RunRow | null> {
      const { rows } = await q.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 FOR UPDATE`, [id]);
      return rows[0] ?? null;
    },

    /** queued/running → succeeded/failed, once: a second attempt to end the same run changes nothing and returns null. */
    async recordRunEnd(
      id: string,
      r: { status: 'succeeded' | 'failed'; output: unknown; error: string | null },
      q: Queryable = db,
    ): Promise<RunRow | null> {
      const { rows } = await q.query<RunRow>(
        `UPDATE runs SET status = $2, output = $3, error = $4, finished_at = now(), waiting_at = NULL, updated_at = now()
         WHERE id = $1 AND status IN ('queued', 'running', 'waiting')
         RETURNING ${RUN_COLUMNS}`,
        [id, r.status, JSON.stringify(r.output ?? null), r.error],
      );
      return rows[0] ?? null;
    },
  };
}
export type RunsRepository = ReturnType<typeof createRunsRepository>;
