import type { Queryable } from '../pool';

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
}

const COLUMNS = `id, account_id, type, data, chain_depth, target_webhook_id, created_at`;

/** Only the row: an event is dispatched when its writer also calls startEventDispatch (lib/engine-starts.ts). */
export async function insertEvent(q: Queryable, e: NewEvent): Promise<EventRow> {
  const { rows } = await q.query<EventRow>(
    `INSERT INTO events (account_id, type, data, chain_depth, target_webhook_id) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [e.accountId, e.type, JSON.stringify(e.data), e.chainDepth ?? 0, e.targetWebhookId ?? null],
  );
  return rows[0]!;
}

export async function findEvent(q: Queryable, id: string): Promise<EventRow | null> {
  const { rows } = await q.query<EventRow>(`SELECT ${COLUMNS} FROM events WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/** The envelope delivered to outgoing webhooks (DESIGN §4 Events); the same bytes on every retry. */
export function eventEnvelope(e: EventRow) {
  return { id: e.id, type: e.type, timestamp: e.created_at.toISOString(), accountId: e.account_id, data: e.data };
}
