import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import type { Run } from './run-status';
import type { RunStep } from './use-run-events';

/** What a rerun says of the run it reruns (docs/api.md § Agent runs: POST /api/runs/:id/rerun). */
export interface RerunOf {
  runId: string;
  fromStep: number;
}

/** A run with its rerun links: `rerunOf` on every run; `reruns` (newest first, at most 20) on GET /api/runs/:id. */
export type RunWithReruns = Run & { rerunOf?: RerunOf | null; reruns?: Array<RerunOf & { createdAt: string }> };

/** A step copied from the run this one reruns (recorded there, not made again). */
export const isCopied = (step: RunStep): boolean => (step as { copied?: boolean }).copied === true;

type RerunCall = (
  path: '/api/runs/{id}/rerun',
  init: { params: { path: { id: string } }; body: { fromStep: number } },
) => Promise<{ data?: Run; error?: unknown; response: Response }>;

/** POST /api/runs/:id/rerun from a step: 202 the new run, queued. */
export async function rerunFrom(runId: string, fromStep: number): Promise<RunWithReruns> {
  // Typed here by hand: the route comes with the rerun API; once schema.d.ts has it, this is client.POST as is.
  const post = client.POST as unknown as RerunCall;
  return unwrap(await post('/api/runs/{id}/rerun', { params: { path: { id: runId } }, body: { fromStep } }));
}
