import { WORKFLOW_TYPES, workflowIds } from '../../lib/temporal-names';
import type { Queryable } from '../pool';
import { enqueueWorkflow } from './outbox';

export interface EventRow {
  id: string;
  account_id: string;
  type: string;
  data: Record<string, unknown>;
  chain_depth: number;
  target_webhook_id: string | null;
  created_at: Date;
}

export interface NewEvent {
  accountId: string;
  type: string;
  data: Record<string, unknown>;
  chainDepth?: number;
  /** webhook.test: delivered to this webhook only, and to no trigger. */
  targetWebhookId?: string;
  /** Search attributes of the dispatch workflow. */
  agentId?: string | null;
  triggerId?: string | null;
}

/**
 * Emits an event inside the caller's transaction: the event row and the hand-off of its dispatch
 * workflow `event:<id>` commit (or roll back) together with the change that caused it.
 */
export async function emitEvent(q: Queryable, e: NewEvent): Promise<string> {
  const { rows } = await q.query<{ id: string }>(
    `INSERT INTO events (account_id, type, data, chain_depth, target_webhook_id) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [e.accountId, e.type, JSON.stringify(e.data), e.chainDepth ?? 0, e.targetWebhookId ?? null],
  );
  const id = rows[0]!.id;
  await enqueueWorkflow(q, {
    workflowType: WORKFLOW_TYPES.event,
    workflowId: workflowIds.event(id),
    args: [{ eventId: id }],
    tags: { accountId: e.accountId, agentId: e.agentId, triggerId: e.triggerId },
  });
  return id;
}

export async function findEvent(q: Queryable, id: string): Promise<EventRow | null> {
  const { rows } = await q.query<EventRow>(
    `SELECT id, account_id, type, data, chain_depth, target_webhook_id, created_at FROM events WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** The envelope delivered to outgoing webhooks (DESIGN §4 Events); the same bytes on every retry. */
export function eventEnvelope(e: EventRow) {
  return { id: e.id, type: e.type, timestamp: e.created_at.toISOString(), accountId: e.account_id, data: e.data };
}
