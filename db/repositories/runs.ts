import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

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

/** Only the row (status queued): the run executes when its writer also calls startRun (lib/engine-starts.ts). */
export async function insertRun(q: Queryable, r: NewRun): Promise<RunRow> {
  const { rows } = await q.query<RunRow>(
    `INSERT INTO runs (account_id, agent_id, trigger_id, fire_id, input, chain_depth) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING ${RUN_COLUMNS}`,
    [r.accountId, r.agentId, r.triggerId ?? null, r.fireId ?? null, JSON.stringify(r.input ?? null), r.chainDepth ?? 0],
  );
  return rows[0]!;
}

export async function findRun(q: Queryable, id: string): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/** Null for a run of another account (the API answers 404 either way). */
export async function findAccountRun(q: Queryable, accountId: string, id: string): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 AND account_id = $2`, [id, accountId]);
  return rows[0] ?? null;
}

/** An agent's runs, newest first. */
export async function listAgentRuns(q: Queryable, accountId: string, agentId: string, page: PageRequest): Promise<Page<RunRow>> {
  const k = keysetTail(page, 3);
  const { rows } = await q.query<RunRow & { page_created_at: string }>(
    `SELECT ${RUN_COLUMNS}, ${PAGE_KEY_COLUMNS} FROM runs WHERE agent_id = $1 AND account_id = $2 ${k.where} ${k.tail}`,
    [agentId, accountId, ...k.params],
  );
  return toPage(rows, page.limit, ({ page_created_at: _key, ...run }) => run);
}

/**
 * queued → running (a retried attempt finds it running and goes on). Null when the run is gone or
 * already finished: the caller then reads it to tell which.
 */
export async function markRunRunning(q: Queryable, id: string): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>(
    `UPDATE runs SET status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
     WHERE id = $1 AND status IN ('queued', 'running')
     RETURNING ${RUN_COLUMNS}`,
    [id],
  );
  return rows[0] ?? null;
}

/** running → succeeded/failed, once: a second attempt to finish the same run changes nothing and returns null. */
export async function finishRun(
  q: Queryable,
  id: string,
  r: { status: 'succeeded' | 'failed'; output: unknown; error: string | null },
): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>(
    `UPDATE runs SET status = $2, output = $3, error = $4, finished_at = now(), updated_at = now()
     WHERE id = $1 AND status IN ('queued', 'running')
     RETURNING ${RUN_COLUMNS}`,
    [id, r.status, JSON.stringify(r.output ?? null), r.error],
  );
  return rows[0] ?? null;
}
