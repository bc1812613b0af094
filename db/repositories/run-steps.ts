import type { StepType } from '../../workflows/types';
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
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
}

const COLUMNS = `run_id, step_index, type, name, tool_id, tool_type, input, output, error, usage, planned_by, started_at, finished_at, created_at`;

export interface NewRunStep {
  type: StepType;
  name: string;
  toolId?: string | null;
  toolType?: string | null;
  /** Omitted: the step takes the run's input. */
  input?: unknown;
}

/** Appends steps to a run, numbered after its last one; `plannedBy`: the step whose answer adds them. */
export async function insertRunSteps(q: Queryable, runId: string, steps: NewRunStep[], plannedBy: number | null = null): Promise<RunStepRow[]> {
  if (steps.length === 0) return [];
  const { rows } = await q.query<RunStepRow>(
    `INSERT INTO run_steps (run_id, step_index, type, name, tool_id, tool_type, input, planned_by)
     SELECT $1, coalesce((SELECT max(step_index) + 1 FROM run_steps WHERE run_id = $1), 0) + s.ord - 1,
            s.step ->> 'type', s.step ->> 'name', (s.step ->> 'tool_id')::uuid, s.step ->> 'tool_type', nullif(s.step -> 'input', 'null'), $3
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS s(step, ord)
     RETURNING ${COLUMNS}`,
    [
      runId,
      JSON.stringify(
        steps.map((s) => ({ type: s.type, name: s.name, tool_id: s.toolId ?? null, tool_type: s.toolType ?? null, input: s.input ?? null })),
      ),
      plannedBy,
    ],
  );
  return rows.sort((a, b) => a.step_index - b.step_index);
}

/** The steps a step's answer added (see insertRunSteps), in order. */
export async function listStepsPlannedBy(q: Queryable, runId: string, index: number): Promise<RunStepRow[]> {
  const { rows } = await q.query<RunStepRow>(`SELECT ${COLUMNS} FROM run_steps WHERE run_id = $1 AND planned_by = $2 ORDER BY step_index`, [runId, index]);
  return rows;
}

/** A run's finished steps after `afterIndex`, in order (what a live event stream has not sent yet). */
export async function listFinishedStepsAfter(q: Queryable, runId: string, afterIndex: number, limit: number): Promise<RunStepRow[]> {
  const { rows } = await q.query<RunStepRow>(
    `SELECT ${COLUMNS} FROM run_steps WHERE run_id = $1 AND step_index > $2 AND finished_at IS NOT NULL ORDER BY step_index LIMIT $3`,
    [runId, afterIndex, limit],
  );
  return rows;
}

/** Every step of a run, in order. */
export async function listRunSteps(q: Queryable, runId: string): Promise<RunStepRow[]> {
  const { rows } = await q.query<RunStepRow>(`SELECT ${COLUMNS} FROM run_steps WHERE run_id = $1 ORDER BY step_index`, [runId]);
  return rows;
}

/** One page of a run's steps in order, after `afterIndex` (exclusive); one extra row tells whether more remain. */
export async function listRunStepsPage(q: Queryable, runId: string, page: { limit: number; afterIndex?: number }): Promise<{ items: RunStepRow[]; more: boolean }> {
  const { rows } = await q.query<RunStepRow>(
    `SELECT ${COLUMNS} FROM run_steps WHERE run_id = $1 AND step_index > $2 ORDER BY step_index LIMIT $3`,
    [runId, page.afterIndex ?? -1, page.limit + 1],
  );
  return { items: rows.slice(0, page.limit), more: rows.length > page.limit };
}

/** A step with what its activity needs of its run (one read); null when either is missing. */
export async function findStepOfRun(
  q: Queryable,
  runId: string,
  index: number,
): Promise<{ step: RunStepRow; run: { status: string; account_id: string; executor: 'tools' | 'model' | null; input: unknown } } | null> {
  const { rows } = await q.query<RunStepRow & { run_status: string; run_account_id: string; run_executor: 'tools' | 'model' | null; run_input: unknown }>(
    `SELECT s.*, r.status AS run_status, r.account_id AS run_account_id, r.executor AS run_executor, r.input AS run_input
       FROM runs r JOIN run_steps s ON s.run_id = r.id AND s.step_index = $2 WHERE r.id = $1`,
    [runId, index],
  );
  const row = rows[0];
  if (!row) return null;
  const { run_status, run_account_id, run_executor, run_input, ...step } = row;
  return { step, run: { status: run_status, account_id: run_account_id, executor: run_executor, input: run_input } };
}

export async function findRunStep(q: Queryable, runId: string, index: number): Promise<RunStepRow | null> {
  const { rows } = await q.query<RunStepRow>(`SELECT ${COLUMNS} FROM run_steps WHERE run_id = $1 AND step_index = $2`, [runId, index]);
  return rows[0] ?? null;
}

/** An attempt is about to make the step's call (a later attempt, after one died, overwrites the time). */
export async function markRunStepStarted(q: Queryable, runId: string, index: number, at: Date): Promise<void> {
  await q.query(`UPDATE run_steps SET started_at = $3 WHERE run_id = $1 AND step_index = $2 AND finished_at IS NULL`, [runId, index, at]);
}

/**
 * Records what the step's call returned, once, and only while its run is running (a call that returns
 * after the run ended — timed out — is not recorded), together with the steps its answer adds (`next`,
 * numbered after the run's last step, `planned_by` this one): one statement, so a retry finds both or
 * neither. Null when nothing was written.
 */
export async function finishRunStep(
  q: Queryable,
  runId: string,
  index: number,
  r: { output: unknown; error: string | null; usage?: unknown; startedAt: Date; finishedAt: Date },
  next: NewRunStep[] = [],
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
     )
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
    ],
  );
  const strip = ({ added: _added, ...row }: RunStepRow & { added: boolean }): RunStepRow => row;
  const step = rows.find((row) => !row.added);
  if (!step) return null;
  return { step: strip(step), added: rows.filter((row) => row.added).map(strip).sort((a, b) => a.step_index - b.step_index) };
}
