import { randomUUID } from 'node:crypto';
import { WORKFLOW_TYPES, workflowIds } from '../../lib/temporal-names';
import type { FireInput, FireSource } from '../../workflows/types';
import { keysetTail, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';
import { enqueueWorkflow } from './outbox';
import type { RunStatus } from './runs';

/** What the fire history shows: 'skipped' (trigger disabled when it ran), the run's status, or 'fired' (no run). */
export type FireState = 'fired' | 'skipped' | RunStatus;

export interface FireListRow {
  id: string;
  source: FireSource;
  run_id: string | null;
  state: FireState;
  scheduled_at: Date | null;
  created_at: Date;
}

/** A fire the API starts itself; schedule and event fires are started by Temporal and the dispatch activity. */
export interface NewFire {
  accountId: string;
  agentId: string | null;
  triggerId: string;
  source: Extract<FireSource, 'manual' | 'webhook'>;
  payload: unknown;
}

const KEY_PREFIX: Record<NewFire['source'], string> = { manual: 'manual', webhook: 'hook' };

/**
 * Queues the workflow `fire:<triggerId>:<fireKey>` inside the caller's transaction; it is handed to
 * Temporal once this commits. Every fire that is not a schedule's goes through here.
 */
export async function enqueueFire(q: Queryable, tags: { accountId: string; agentId: string | null }, input: FireInput, fireKey: string): Promise<void> {
  await enqueueWorkflow(q, {
    workflowType: WORKFLOW_TYPES.fire,
    workflowId: workflowIds.fire(input.triggerId, fireKey),
    args: [input],
    tags: { ...tags, triggerId: input.triggerId },
  });
}

/**
 * Queues a manual or hook fire (key `manual-<fireId>` / `hook-<fireId>`); recordFire inserts the fire
 * row with this id. The id is returned at once, before the fire has run.
 */
export async function queueFire(q: Queryable, f: NewFire): Promise<string> {
  const fireId = randomUUID();
  const input: FireInput = { triggerId: f.triggerId, source: f.source, fireId, payload: f.payload ?? null };
  await enqueueFire(q, { accountId: f.accountId, agentId: f.agentId }, input, `${KEY_PREFIX[f.source]}-${fireId}`);
  return fireId;
}

export function createFiresRepository(db: Queryable) {
  return {
    /** A trigger's fires, newest first, each with the status of the run it started. */
    async listForTrigger(accountId: string, triggerId: string, page: PageRequest, q: Queryable = db): Promise<Page<FireListRow>> {
      const k = keysetTail(page, 3, 'f');
      const { rows } = await q.query<FireListRow & { page_created_at: string }>(
        `SELECT f.id, f.source, f.run_id, f.scheduled_at, f.created_at, f.created_at::text AS page_created_at,
           CASE WHEN f.status = 'skipped' THEN 'skipped' WHEN r.id IS NOT NULL THEN r.status ELSE 'fired' END AS state
         FROM fires f LEFT JOIN runs r ON r.id = f.run_id
         WHERE f.trigger_id = $1 AND f.account_id = $2 ${k.where} ${k.tail}`,
        [triggerId, accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },
  };
}
export type FiresRepository = ReturnType<typeof createFiresRepository>;
