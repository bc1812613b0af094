import type { EventRow } from '../../db/repositories/events';

/** The envelope delivered to outgoing webhooks (docs/api.md § Events); the same bytes on every retry. */
export function eventEnvelope(e: EventRow) {
  return { id: e.id, type: e.type, timestamp: e.created_at.toISOString(), accountId: e.account_id, data: e.data };
}
