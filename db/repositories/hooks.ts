import type { Queryable } from '../pool';
import { hitUpTo } from './request-guards';
import { countTriggeredSql } from './webhooks';

/** The public hook endpoints find their target by id or path alone: the caller has no account. */

export interface IncomingWebhookRow {
  id: string;
  account_id: string;
  secret_sealed: string | null;
}

export interface HookTriggerRow {
  id: string;
  account_id: string;
  agent_id: string | null;
  /** Secrets inside are sealed (lib/secret-config.ts). */
  config_json: Record<string, unknown>;
}

export function createHooksRepository(db: Queryable) {
  return {
    /**
     * An enabled incoming webhook, in any account, with its event types, and a hit on its requests' counter
     * (`key`: a fixed window of `windowMs` holding at most `max`, request-guards' hitUpTo), in one
     * statement; the counter is not touched when there is no such webhook. `allowed`: this hit is within
     * the limit; `ttlMs`: until the window resets.
     */
    async findIncomingWebhookCounted(
      id: string,
      limit: { key: string; windowMs: number; max: number },
      q: Queryable = db,
    ): Promise<(IncomingWebhookRow & { events: string[]; allowed: boolean; ttlMs: number }) | null> {
      const { ctes, counted } = hitUpTo('EXISTS (SELECT 1 FROM hook)');
      const { rows } = await q.query<IncomingWebhookRow & { events: string[]; hits: number; ttl_ms: number }>(
        `WITH hook AS (
           SELECT id, account_id, secret_sealed, events FROM webhooks WHERE id = $4 AND direction = 'incoming' AND enabled
         ), ${ctes}
         SELECT hook.id, hook.account_id, hook.secret_sealed, hook.events, counted.hits, counted.ttl_ms FROM hook, ${counted} AS counted`,
        [limit.key, limit.windowMs, limit.max, id],
      );
      const r = rows[0];
      return r ? { id: r.id, account_id: r.account_id, secret_sealed: r.secret_sealed, events: r.events, allowed: r.hits <= limit.max, ttlMs: r.ttl_ms } : null;
    },

    /**
     * Counts one accepted request, if the webhook is still an enabled incoming one (it may have changed
     * since it was read): false otherwise. The row is held shared to the commit (a user's change to it
     * waits, and is waited for), and the count is added beside it (webhooks.ts countTriggeredSql), so
     * concurrent calls of the webhook do not wait for each other.
     */
    async countIncoming(id: string, q: Queryable): Promise<boolean> {
      const { rowCount } = await q.query(
        `WITH hook AS (SELECT id FROM webhooks WHERE id = $1 AND direction = 'incoming' AND enabled FOR SHARE)
         ${countTriggeredSql('hook')}`,
        [id],
      );
      return rowCount === 1;
    },

    /**
     * Claims a signed message id for the webhook. False when it was already received (a sender's retry);
     * a concurrent claim of the same id waits here until the first one commits or rolls back.
     */
    async claimReceipt(webhookId: string, messageId: string, q: Queryable): Promise<boolean> {
      const { rowCount } = await q.query(
        `INSERT INTO hook_receipts (webhook_id, message_id, event_ids) VALUES ($1, $2, '{}') ON CONFLICT DO NOTHING`,
        [webhookId, messageId],
      );
      return rowCount === 1;
    },

    async setReceiptEvents(webhookId: string, messageId: string, eventIds: string[], q: Queryable): Promise<void> {
      await q.query(`UPDATE hook_receipts SET event_ids = $3 WHERE webhook_id = $1 AND message_id = $2`, [webhookId, messageId, eventIds]);
    },

    async receiptEvents(webhookId: string, messageId: string, q: Queryable = db): Promise<string[]> {
      const { rows } = await q.query<{ event_ids: string[] }>(
        `SELECT event_ids FROM hook_receipts WHERE webhook_id = $1 AND message_id = $2`,
        [webhookId, messageId],
      );
      return rows[0]?.event_ids ?? [];
    },

    /** The enabled webhook trigger with this path (unique across accounts). */
    async findWebhookTrigger(webhookPath: string, q: Queryable = db): Promise<HookTriggerRow | null> {
      const { rows } = await q.query<HookTriggerRow>(
        `SELECT id, account_id, agent_id, config_json FROM triggers WHERE webhook_path = $1 AND type = 'webhook' AND enabled`,
        [webhookPath],
      );
      return rows[0] ?? null;
    },
  };
}
export type HooksRepository = ReturnType<typeof createHooksRepository>;
