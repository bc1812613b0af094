import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

/** A person's decision on a tool call a model run asked for (docs/api.md § Approvals; migration 25). */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'cancelled';

export interface ApprovalRow {
  id: string;
  account_id: string;
  run_id: string;
  step_index: number;
  agent_id: string;
  tool_id: string | null;
  function: string | null;
  arguments: unknown;
  /** The JSON Schema an approve's edited arguments are checked against. */
  parameters: Record<string, unknown>;
  status: ApprovalStatus;
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  comment: string | null;
}

const COLUMNS = `id, account_id, run_id, step_index, agent_id, tool_id, function, arguments, parameters, status, created_at, expires_at, decided_at, decided_by, comment`;

export interface NewApproval {
  accountId: string;
  runId: string;
  stepIndex: number;
  agentId: string;
  toolId: string | null;
  function: string | null;
  arguments: unknown;
  parameters: Record<string, unknown>;
  expiresInMs: number;
}

export function createApprovalsRepository(db: Queryable) {
  return {
    /**
     * The approval of a run's step, made once: a retry of the activity that asks for it finds the one it made
     * (`created` false). The step names it (run_steps.approval_id) and is marked started, in the same statement.
     */
    async insertApproval(a: NewApproval, q: Queryable = db): Promise<{ row: ApprovalRow; created: boolean }> {
      const { rows } = await q.query<ApprovalRow & { created: boolean }>(
        `WITH made AS (
           INSERT INTO approvals (account_id, run_id, step_index, agent_id, tool_id, function, arguments, parameters, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + $9 * interval '1 millisecond')
           ON CONFLICT (run_id, step_index) DO NOTHING
           RETURNING ${COLUMNS}
         ), named AS (
           UPDATE run_steps SET approval_id = made.id, started_at = coalesce(run_steps.started_at, now())
             FROM made WHERE run_steps.run_id = $2 AND run_steps.step_index = $3
         )
         SELECT *, true AS created FROM made
         UNION ALL
         SELECT ${COLUMNS}, false AS created FROM approvals WHERE run_id = $2 AND step_index = $3 AND NOT EXISTS (SELECT 1 FROM made)`,
        [a.accountId, a.runId, a.stepIndex, a.agentId, a.toolId, a.function, JSON.stringify(a.arguments ?? null), JSON.stringify(a.parameters), a.expiresInMs],
      );
      const { created, ...row } = rows[0]!;
      return { row, created };
    },

    async findApprovalOfStep(runId: string, stepIndex: number, q: Queryable = db): Promise<ApprovalRow | null> {
      const { rows } = await q.query<ApprovalRow>(`SELECT ${COLUMNS} FROM approvals WHERE run_id = $1 AND step_index = $2`, [runId, stepIndex]);
      return rows[0] ?? null;
    },

    async findAccountApproval(accountId: string, id: string, q: Queryable = db): Promise<ApprovalRow | null> {
      const { rows } = await q.query<ApprovalRow>(`SELECT ${COLUMNS} FROM approvals WHERE id = $1 AND account_id = $2`, [id, accountId]);
      return rows[0] ?? null;
    },

    /** A run's approvals still waiting for a decision, in step order (its live stream sends each as `waiting`). */
    async listPendingRunApprovals(runId: string, q: Queryable = db): Promise<ApprovalRow[]> {
      const { rows } = await q.query<ApprovalRow>(`SELECT ${COLUMNS} FROM approvals WHERE run_id = $1 AND status = 'pending' ORDER BY step_index`, [runId]);
      return rows;
    },

    /** The account's approvals, newest first, optionally in one status. */
    async listAccountApprovals(accountId: string, filter: { status?: ApprovalStatus; runId?: string }, page: PageRequest, q: Queryable = db): Promise<Page<ApprovalRow>> {
      const k = keysetTail(page, 4);
      const { rows } = await q.query<ApprovalRow & { page_created_at: string }>(
        `SELECT ${COLUMNS}, ${PAGE_KEY_COLUMNS} FROM approvals
          WHERE account_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR run_id = $3) ${k.where} ${k.tail}`,
        [accountId, filter.status ?? null, filter.runId ?? null, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    /**
     * pending → approved / rejected, once, while it has not expired (and its run still waits: a run that ended
     * cancelled it). Null when nothing was written: the caller looks at the row to say why.
     */
    async decideApproval(
      accountId: string,
      id: string,
      d: { status: 'approved' | 'rejected'; arguments?: unknown; comment: string | null; decidedBy: string },
      q: Queryable = db,
    ): Promise<ApprovalRow | null> {
      const { rows } = await q.query<ApprovalRow>(
        `UPDATE approvals SET status = $3, decided_at = now(), decided_by = $4, comment = $5,
                arguments = CASE WHEN $6::boolean THEN $7::jsonb ELSE arguments END
          WHERE id = $1 AND account_id = $2 AND status = 'pending' AND expires_at > now()
          RETURNING ${COLUMNS}`,
        [id, accountId, d.status, d.decidedBy, d.comment, d.arguments !== undefined, JSON.stringify(d.arguments ?? null)],
      );
      return rows[0] ?? null;
    },

    /** pending → expired once its time is up; the row as it stands either way. */
    async expireApproval(id: string, q: Queryable = db): Promise<ApprovalRow | null> {
      const { rows } = await q.query<ApprovalRow>(
        `WITH expired AS (
           UPDATE approvals SET status = 'expired', decided_at = now() WHERE id = $1 AND status = 'pending' AND expires_at <= now() RETURNING ${COLUMNS}
         )
         SELECT * FROM expired UNION ALL SELECT ${COLUMNS} FROM approvals WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM expired)`,
        [id],
      );
      return rows[0] ?? null;
    },

    /** running → waiting (the run holds no slot of its account's line while it waits); false when it was not running. */
    async markRunAwaitingApproval(runId: string, q: Queryable = db): Promise<boolean> {
      const { rowCount } = await q.query(`UPDATE runs SET status = 'waiting', updated_at = now() WHERE id = $1 AND status = 'running'`, [runId]);
      return rowCount === 1;
    },

    /**
     * waiting (or queued, below) → running again once its approval is decided; false when it was neither.
     * Its place in line (`waiting_at`) is given up: it holds a slot now.
     */
    async markRunResumed(runId: string, q: Queryable = db): Promise<boolean> {
      const { rowCount } = await q.query(
        `UPDATE runs SET status = 'running', waiting_at = NULL, updated_at = now() WHERE id = $1 AND status IN ('waiting', 'queued')`,
        [runId],
      );
      return rowCount === 1;
    },

    /**
     * waiting → queued: decided, but its account's line is full. It is in line as every queued run with a
     * workflow is (not parked, `waiting_at` its check-in), so the end of another run of the account wakes it
     * (engine/runs/wake-ups.ts) and younger queued runs wait behind it; each recheck checks in again.
     */
    async markDecidedRunQueued(runId: string, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE runs SET status = 'queued', waiting_at = now(), updated_at = now() WHERE id = $1 AND status IN ('waiting', 'queued')`, [runId]);
    },
  };
}
export type ApprovalsRepository = ReturnType<typeof createApprovalsRepository>;
