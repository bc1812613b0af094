import type { StepType } from '../../engine/contract';
import type { Queryable } from '../pool';

/** One step of a run (docs/architecture.md § When a run is started): a tool call or a model call. */
export interface RunStepRow {
  run_id: string;
  step_index: number;
  type: StepType;
  name: string;
  tool_id: string | null;
  tool_type: string | null;
  input: unknown;
  output: unknown;
  error: string | null;
  usage: unknown;
  /** The step whose answer added this one; null for the steps planned when the run started. */
  planned_by: number | null;
  /** An approval step's approval (approvals.ts); null for other steps. */
  approval_id?: string | null;
  /** Copied from the run this one reruns: recorded there, not made here (db/repositories/reruns.ts). */
  copied?: boolean;
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
}

const COLUMNS = `run_id, step_index, type, name, tool_id, tool_type, input, output, error, usage, planned_by, approval_id, copied, started_at, finished_at, created_at`;

export interface NewRunStep {
  type: StepType;
  name: string;
  toolId?: string | null;
  toolType?: string | null;
  /** Omitted: the step takes the run's input. */
  input?: unknown;
}

/**
 * The INSERT … SELECT of steps given as JSON ($2, stepsJson), numbered after the run's ($1) last one,
 * planned by `plannedBy` (an SQL expression), for the rows `where` allows.
 */
const insertStepsSql = (plannedBy: string, where = '') =>
  `INSERT INTO run_steps (run_id, step_index, type, name, tool_id, tool_type, input, planned_by)
     SELECT $1, coalesce((SELECT max(step_index) + 1 FROM run_steps WHERE run_id = $1), 0) + s.ord - 1,
            s.step ->> 'type', s.step ->> 'name', (s.step ->> 'tool_id')::uuid, s.step ->> 'tool_type', nullif(s.step -> 'input', 'null'), ${plannedBy}
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS s(step, ord)
     ${where}
     RETURNING ${COLUMNS}`;

const stepsJson = (steps: NewRunStep[]) =>
  JSON.stringify(steps.map((s) => ({ type: s.type, name: s.name, tool_id: s.toolId ?? null, tool_type: s.toolType ?? null, input: s.input ?? null })));

/**
 * Adds to the account's usage of today (UTC; account_usage_days), from `select` (account_id, runs,
 * prompt tokens, completion tokens, tool calls): an upsert, so concurrent steps of every worker add up
 * exactly. A data-modifying CTE of the statement that records what it counts.
 */
const COUNT_USAGE_DAY = (select: string) =>
  `INSERT INTO account_usage_days AS d (account_id, day, runs, prompt_tokens, completion_tokens, tool_calls)
   SELECT x.account_id, (now() AT TIME ZONE 'UTC')::date, x.runs, x.prompt_tokens, x.completion_tokens, x.tool_calls
     FROM (${select}) AS x(account_id, runs, prompt_tokens, completion_tokens, tool_calls)
   ON CONFLICT (account_id, day) DO UPDATE SET runs = d.runs + EXCLUDED.runs, prompt_tokens = d.prompt_tokens + EXCLUDED.prompt_tokens,
     completion_tokens = d.completion_tokens + EXCLUDED.completion_tokens, tool_calls = d.tool_calls + EXCLUDED.tool_calls`;

/** What a step's activity needs of its run. */
export interface StepRun {
  status: string;
  account_id: string;
  executor: 'tools' | 'model' | null;
  input: unknown;
}

/** Prompt + completion tokens the run's account has spent today (UTC): the model budget a model step checks. */
const TOKENS_TODAY = `coalesce((SELECT u.prompt_tokens + u.completion_tokens FROM account_usage_days u
  WHERE u.account_id = r.account_id AND u.day = (now() AT TIME ZONE 'UTC')::date), 0) AS run_tokens_today`;

/** The UPDATE of startStepOfRun and startStepInRun ($1 run, $2 step index, $3 time). */
const START_STEP = `UPDATE run_steps SET started_at = $3 WHERE run_id = $1 AND step_index = $2 AND finished_at IS NULL
  AND EXISTS (SELECT 1 FROM runs WHERE id = $1 AND status = 'running')`;

/**
 * Records what the step's call returned, once, and only while its run is running (a call that returns
 * after the run ended — timed out — is not recorded), together with the steps its answer adds (`next`,
 * numbered after the run's last step, `planned_by` this one) and what it used — its tokens (`usage`) and,
 * a tool step, one tool call — added to the run's usage and to its account's usage of today
 * (account_usage_days, which MODEL_TOKENS_PER_DAY reads): one statement, so a retry finds all of it or
 * none, and nothing is counted twice. Null when nothing was written.
 */
/** A count of tokens in a step's usage; 0 when absent or not a count. */
function tokensOf(usage: unknown, key: 'promptTokens' | 'completionTokens'): number {
  const n = (usage as Record<string, unknown> | null | undefined)?.[key];
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0;
}

export function createRunStepsRepository(db: Queryable) {
  return {
    /**
     * queued → running, made by `executor`, with its planned steps (insertStepsSql), in one statement; the
     * steps inserted (none when the run was no longer queued).
     */
    async markRunRunningWithSteps(runId: string, executor: 'tools' | 'model', steps: NewRunStep[], q: Queryable = db): Promise<RunStepRow[]> {
      const { rows } = await q.query<RunStepRow>(
        `WITH running AS (
           UPDATE runs SET status = 'running', executor = $3, started_at = now(), waiting_at = NULL, updated_at = now()
            WHERE id = $1 AND status = 'queued'
           RETURNING id, account_id
         ), counted AS (${COUNT_USAGE_DAY('SELECT account_id, 1, 0, 0, 0 FROM running')})
         ${insertStepsSql('NULL', 'WHERE EXISTS (SELECT 1 FROM running)')}`,
        [runId, stepsJson(steps), executor],
      );
      return rows.sort((a, b) => a.step_index - b.step_index);
    },

    /** The steps a step's answer added (finishRunStep's `next`), in order. */
    async listStepsPlannedBy(runId: string, index: number, q: Queryable = db): Promise<RunStepRow[]> {
      const { rows } = await q.query<RunStepRow>(`SELECT ${COLUMNS} FROM run_steps WHERE run_id = $1 AND planned_by = $2 ORDER BY step_index`, [runId, index]);
      return rows;
    },

    /** A run's finished steps after `afterIndex`, in order (what a live event stream has not sent yet). */
    async listFinishedStepsAfter(runId: string, afterIndex: number, limit: number, q: Queryable = db): Promise<RunStepRow[]> {
      const { rows } = await q.query<RunStepRow>(
        `SELECT ${COLUMNS} FROM run_steps WHERE run_id = $1 AND step_index > $2 AND finished_at IS NOT NULL ORDER BY step_index LIMIT $3`,
        [runId, afterIndex, limit],
      );
      return rows;
    },

    /** Every step of a run, in order. */
    async listRunSteps(runId: string, q: Queryable = db): Promise<RunStepRow[]> {
      const { rows } = await q.query<RunStepRow>(`SELECT ${COLUMNS} FROM run_steps WHERE run_id = $1 ORDER BY step_index`, [runId]);
      return rows;
    },

    /** One page of a run's steps in order, after `afterIndex` (exclusive); one extra row tells whether more remain. */
    async listRunStepsPage(runId: string, page: { limit: number; afterIndex?: number }, q: Queryable = db): Promise<{ items: RunStepRow[]; more: boolean }> {
      const { rows } = await q.query<RunStepRow>(
        `SELECT ${COLUMNS} FROM run_steps WHERE run_id = $1 AND step_index > $2 ORDER BY step_index LIMIT $3`,
        [runId, page.afterIndex ?? -1, page.limit + 1],
      );
      return { items: rows.slice(0, page.limit), more: rows.length > page.limit };
    },

    /**
     * Marks the step started (an attempt is about to make its call; a later attempt, after one died,
     * overwrites the time) when it is unfinished and its run is running, and answers the step with what
     * its activity needs of its run, and the run's last step index (a step with none after it may end the
     * run): one statement. Null when either is missing.
     */
    async startStepOfRun(
      runId: string,
      index: number,
      at: Date,
      q: Queryable = db,
    ): Promise<{ step: RunStepRow; run: StepRun; lastIndex: number } | null> {
      const { rows } = await q.query<RunStepRow & { run_status: string; run_account_id: string; run_executor: 'tools' | 'model' | null; run_input: unknown; last_index: number }>(
        `WITH started AS (${START_STEP})
         SELECT s.*, r.status AS run_status, r.account_id AS run_account_id, r.executor AS run_executor, r.input AS run_input,
                (SELECT max(step_index) FROM run_steps WHERE run_id = $1) AS last_index
           FROM runs r JOIN run_steps s ON s.run_id = r.id AND s.step_index = $2 WHERE r.id = $1`,
        [runId, index, at],
      );
      const row = rows[0];
      if (!row) return null;
      const { run_status, run_account_id, run_executor, run_input, last_index, ...step } = row;
      return { step, run: { status: run_status, account_id: run_account_id, executor: run_executor, input: run_input }, lastIndex: last_index };
    },

    /**
     * startStepOfRun for a step that needs the whole run (a model step sends the conversation so far):
     * the run (null when gone) with every step, in order; the step is marked started as there.
     */
    async startStepInRun(
      runId: string,
      index: number,
      at: Date,
      q: Queryable = db,
    ): Promise<{ run: StepRun & { id: string; tokensToday: number }; steps: RunStepRow[] } | null> {
      const { rows } = await q.query<
        Partial<RunStepRow> & { run_status: string; run_account_id: string; run_executor: 'tools' | 'model' | null; run_input: unknown; run_tokens_today: string }
      >(
        `WITH started AS (${START_STEP})
         SELECT s.*, r.status AS run_status, r.account_id AS run_account_id, r.executor AS run_executor, r.input AS run_input, ${TOKENS_TODAY}
           FROM runs r LEFT JOIN run_steps s ON s.run_id = r.id WHERE r.id = $1 ORDER BY s.step_index`,
        [runId, index, at],
      );
      const first = rows[0];
      if (!first) return null;
      const run = {
        id: runId,
        status: first.run_status,
        account_id: first.run_account_id,
        executor: first.run_executor,
        input: first.run_input,
        tokensToday: Number(first.run_tokens_today),
      };
      const steps = rows
        .filter((r) => r.step_index !== null && r.step_index !== undefined)
        .map(({ run_status: _s, run_account_id: _a, run_executor: _e, run_input: _i, run_tokens_today: _t, ...step }) => step as RunStepRow);
      return { run, steps };
    },

    async findRunStep(runId: string, index: number, q: Queryable = db): Promise<RunStepRow | null> {
      const { rows } = await q.query<RunStepRow>(`SELECT ${COLUMNS} FROM run_steps WHERE run_id = $1 AND step_index = $2`, [runId, index]);
      return rows[0] ?? null;
    },

    async finishRunStep(
      runId: string,
      index: number,
      r: { output: unknown; error: string | null; usage?: unknown; startedAt: Date; finishedAt: Date },
      next: NewRunStep[] = [],
      q: Queryable = db,
    ): Promise<{ step: RunStepRow; added: RunStepRow[] } | null> {
      const { rows } = await q.query<RunStepRow & { added: boolean }>(
        `WITH finished AS (
           UPDATE run_steps SET output = $3, error = $4, usage = $5, started_at = $6, finished_at = $7
            WHERE run_id = $1 AND step_index = $2 AND finished_at IS NULL
              AND EXISTS (SELECT 1 FROM runs WHERE id = $1 AND status = 'running')
           RETURNING ${COLUMNS}
         ), added AS (
           INSERT INTO run_steps (run_id, step_index, type, name, tool_id, tool_type, input, planned_by)
           SELECT $1, (SELECT max(step_index) FROM run_steps WHERE run_id = $1) + s.ord,
                  s.step ->> 'type', s.step ->> 'name', (s.step ->> 'tool_id')::uuid, s.step ->> 'tool_type', nullif(s.step -> 'input', 'null'), $2
             FROM jsonb_array_elements($8::jsonb) WITH ORDINALITY AS s(step, ord)
            WHERE EXISTS (SELECT 1 FROM finished)
           RETURNING ${COLUMNS}
         ), used AS (
           SELECT $9::bigint AS prompt_tokens, $10::bigint AS completion_tokens, (SELECT count(*) FROM finished WHERE type = 'tool')::int AS tool_calls
         ), run_usage AS (
           UPDATE runs SET prompt_tokens = runs.prompt_tokens + used.prompt_tokens, completion_tokens = runs.completion_tokens + used.completion_tokens,
                           tool_calls = runs.tool_calls + used.tool_calls
             FROM used WHERE runs.id = $1 AND EXISTS (SELECT 1 FROM finished)
           RETURNING runs.account_id, used.prompt_tokens, used.completion_tokens, used.tool_calls
         ), day_usage AS (${COUNT_USAGE_DAY('SELECT account_id, 0, prompt_tokens, completion_tokens, tool_calls FROM run_usage')})
         SELECT *, false AS added FROM finished UNION ALL SELECT *, true AS added FROM added`,
        [
          runId,
          index,
          JSON.stringify(r.output ?? null),
          r.error,
          r.usage === undefined ? null : JSON.stringify(r.usage),
          r.startedAt,
          r.finishedAt,
          JSON.stringify(next.map((s) => ({ type: s.type, name: s.name, tool_id: s.toolId ?? null, tool_type: s.toolType ?? null, input: s.input ?? null }))),
          tokensOf(r.usage, 'promptTokens'),
          tokensOf(r.usage, 'completionTokens'),
        ],
      );
      const strip = ({ added: _added, ...row }: RunStepRow & { added: boolean }): RunStepRow => row;
      const step = rows.find((row) => !row.added);
      if (!step) return null;
      return { step: strip(step), added: rows.filter((row) => row.added).map(strip).sort((a, b) => a.step_index - b.step_index) };
    },
  };
}
export type RunStepsRepository = ReturnType<typeof createRunStepsRepository>;
