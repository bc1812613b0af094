import { WORKFLOW_TYPES, workflowIds } from '../../lib/temporal-names';
import type { Queryable } from '../pool';
import { enqueueWorkflow } from './outbox';

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed';

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
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const RUN_COLUMNS = `id, account_id, agent_id, trigger_id, fire_id, status, input, output, error, chain_depth,
  started_at, finished_at, created_at, updated_at`;

export interface NewRun {
  accountId: string;
  agentId: string;
  input: unknown;
  chainDepth?: number;
  triggerId?: string | null;
  fireId?: string | null;
}

/**
 * Queues a run inside the caller's transaction: the run row (status queued) and the hand-off of its
 * workflow `run:<id>` commit together.
 */
export async function queueRun(q: Queryable, r: NewRun): Promise<RunRow> {
  const { rows } = await q.query<RunRow>(
    `INSERT INTO runs (account_id, agent_id, trigger_id, fire_id, input, chain_depth) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING ${RUN_COLUMNS}`,
    [r.accountId, r.agentId, r.triggerId ?? null, r.fireId ?? null, JSON.stringify(r.input ?? null), r.chainDepth ?? 0],
  );
  const run = rows[0]!;
  await enqueueWorkflow(q, {
    workflowType: WORKFLOW_TYPES.run,
    workflowId: workflowIds.run(run.id),
    args: [{ runId: run.id }],
    tags: { accountId: r.accountId, agentId: r.agentId, triggerId: r.triggerId },
  });
  return run;
}
