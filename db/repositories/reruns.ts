import type { Queryable } from '../pool';
import { RUN_COLUMNS, type RunRow } from './runs';

/** A rerun of a run, as GET /api/runs/:id lists them. */
export interface RerunRow {
  id: string;
  rerun_from_step: number;
  created_at: Date;
}

/** The model context a rerun's copied first step is given when it starts running (engine/runs/admission.ts). */
export interface RerunContext {
  /** The first step's input: the run's context as planned now. */
  context: unknown;
  /** The model its model steps still to make are named after. */
  model: string;
}

/**
 * Reruns of runs (docs/api.md § Rerun and replay; migration 26): a new run naming the run it reruns and the
 * step it goes on from, with the steps before that step copied into it — recorded, not made (`copied`) — and
 * the steps still to make after them.
 */
export function createRerunsRepository(db: Queryable) {
  return {
    /** How many steps the run has (a rerun may go on from any of them, or from after the last). */
    async countSteps(runId: string, q: Queryable = db): Promise<number> {
      const { rows } = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM run_steps WHERE run_id = $1`, [runId]);
      return rows[0]!.n;
    },

    /**
     * A queued rerun of `original` from step `fromStep` (its input replaced by `input` when given), in one
     * statement: the run; the original's steps before `fromStep` copied as they were recorded (`copied`,
     * same index; their usage is a record: it is not added to the run's usage nor to the account's, which
     * only steps recorded by finishRunStep add to); and, from `fromStep` on, the steps still to make — the
     * original's steps from there that were planned when it started or added by a copied step (the rest of
     * a copied step's turn), renumbered from `fromStep`, unfinished, planned by the rerun's start
     * (`planned_by` null). Steps added by a step from `fromStep` on are not taken: that step adds them
     * again when it is made. The run executes when the caller also calls startRun.
     */
    async insertRerun(q: Queryable, original: Pick<RunRow, 'id' | 'account_id' | 'agent_id' | 'input' | 'thread_id'>, fromStep: number, input?: { value: unknown }): Promise<RunRow> {
      const { rows } = await q.query<RunRow>(
        `WITH rerun AS (
           INSERT INTO runs (account_id, agent_id, input, thread_id, rerun_of_run_id, rerun_from_step)
           VALUES ($1, $2, $3, $4, $5, $6)
           RETURNING ${RUN_COLUMNS}
         ), copied AS (
           INSERT INTO run_steps (run_id, step_index, type, name, tool_id, tool_type, input, output, error, usage, planned_by, approval_id,
                                  started_at, finished_at, copied)
           SELECT rerun.id, s.step_index, s.type, s.name, s.tool_id, s.tool_type, s.input, s.output, s.error, s.usage, s.planned_by, s.approval_id,
                  s.started_at, s.finished_at, true
             FROM rerun, run_steps s WHERE s.run_id = $5 AND s.step_index < $6
         ), remaining AS (
           INSERT INTO run_steps (run_id, step_index, type, name, tool_id, tool_type, input, planned_by)
           SELECT rerun.id, $6 + row_number() OVER (ORDER BY s.step_index) - 1, s.type, s.name, s.tool_id, s.tool_type, s.input, NULL
             FROM rerun, run_steps s
            WHERE $6 > 0 AND s.run_id = $5 AND s.step_index >= $6 AND (s.planned_by IS NULL OR s.planned_by < $6)
         )
         SELECT * FROM rerun`,
        [original.account_id, original.agent_id, JSON.stringify((input ? input.value : original.input) ?? null), original.thread_id, original.id, fromStep],
      );
      return rows[0]!;
    },

    /**
     * A rerun from a step after the first, as it starts running: its copied first model step takes the run's
     * context as planned now (the agent as it is now), and its model steps still to make the model named there.
     */
    async refreshContext(q: Queryable, runId: string, r: RerunContext): Promise<void> {
      await q.query(
        `UPDATE run_steps SET input = CASE WHEN step_index = 0 THEN $2::jsonb ELSE input END,
                              name = CASE WHEN step_index = 0 THEN name ELSE $3 END
          WHERE run_id = $1 AND ((step_index = 0 AND copied AND type = 'model') OR (NOT copied AND type = 'model' AND finished_at IS NULL))`,
        [runId, JSON.stringify(r.context), r.model],
      );
    },

    /** The run's reruns, newest first, at most `limit`. */
    async listReruns(runId: string, limit: number, q: Queryable = db): Promise<RerunRow[]> {
      const { rows } = await q.query<RerunRow>(
        `SELECT id, rerun_from_step, created_at FROM runs WHERE rerun_of_run_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
        [runId, limit],
      );
      return rows;
    },
  };
}
export type RerunsRepository = ReturnType<typeof createRerunsRepository>;
