import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import type { Schemas } from '../../api/client';
import type { Run } from './run-status';
import type { RunStep } from './use-run-events';

/**
 * A run with its rerun links (docs/api.md § Rerun and replay): `rerunOf` on every run; `reruns` (newest
 * first, at most 20) only on GET /api/runs/:id, so optional here where a run may come from a list or the stream.
 */
export type RunWithReruns = Run & { reruns?: Schemas['RunDetail']['reruns'] };

/** A step copied from the run this one reruns (recorded there, not made again). */
export const isCopied = (step: RunStep): boolean => step.copied;

/** POST /api/runs/:id/rerun from a step: 202 the new run, queued. */
export async function rerunFrom(runId: string, fromStep: number): Promise<Run> {
  return unwrap(await client.POST('/api/runs/{id}/rerun', { params: { path: { id: runId } }, body: { fromStep } }));
}
