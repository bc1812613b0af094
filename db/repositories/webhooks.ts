import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

export type WebhookDirection = 'incoming' | 'outgoing';

export interface WebhookRow {
  id: string;
  account_id: string;
  name: string;
  direction: WebhookDirection;
  /** The target of an outgoing webhook; null for incoming (its display URL is derived from the id). */
  url: string | null;
  /** AES-256-GCM sealed secret (lib/secrets.ts), never the plaintext. */
  secret_sealed: string | null;
  events: string[];
  enabled: boolean;
  trigger_count: number;
  last_triggered_at: Date | null;
  /** Why the engine disabled it (every attempt failed for WEBHOOK_DISABLE_AFTER); null otherwise. */
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Writable columns. triggerCount / lastTriggered belong to the engine, not to the API. */
export interface WebhookValues {
  name: string;
  direction: WebhookDirection;
  url: string | null;
  secretSealed: string | null;
  events: string[];
  enabled: boolean;
}

/**
 * The count kept on the row since before migration 24 plus the rows counted beside it (countTriggered), in
 * any statement on `webhooks` (a RETURNING too).
 */
const COUNTED = `(SELECT coalesce(sum(c.trigger_count), 0) FROM webhook_trigger_counts c WHERE c.webhook_id = webhooks.id)`;
const LAST_COUNTED = `(SELECT max(c.last_triggered_at) FROM webhook_trigger_counts c WHERE c.webhook_id = webhooks.id)`;
const COLUMNS = `id, account_id, name, direction, url, secret_sealed, events, enabled,
  (trigger_count + ${COUNTED})::int AS trigger_count, greatest(last_triggered_at, ${LAST_COUNTED}) AS last_triggered_at,
  disabled_reason, created_at, updated_at`;

/**
 * Adds one to the triggerCount of each webhook `ids` yields (SQL: a set of uuids) and sets its lastTriggered,
 * in the row of this connection's own (migration 24): concurrent counts of one webhook take different rows,
 * so none waits for another's commit.
 */
export const countTriggeredSql = (ids: string) => `INSERT INTO webhook_trigger_counts AS c (webhook_id, slot, trigger_count, last_triggered_at)
  SELECT id, pg_backend_pid() % 64, 1, now() FROM ${ids} AS counted(id)
  ON CONFLICT (webhook_id, slot) DO UPDATE SET trigger_count = c.trigger_count + 1, last_triggered_at = greatest(c.last_triggered_at, EXCLUDED.last_triggered_at)`;

export function createWebhooksRepository(db: Queryable) {
  return {
    async insert(accountId: string, v: WebhookValues, q: Queryable = db): Promise<WebhookRow> {
      const { rows } = await q.query<WebhookRow>(
        `INSERT INTO webhooks (account_id, name, direction, url, secret_sealed, events, enabled)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         RETURNING ${COLUMNS}`,
        [accountId, v.name, v.direction, v.url, v.secretSealed, v.events, v.enabled],
      );
      return rows[0]!;
    },

    async findById(accountId: string, id: string, q: Queryable = db): Promise<WebhookRow | null> {
      const { rows } = await q.query<WebhookRow>(
        `SELECT ${COLUMNS} FROM webhooks WHERE id = $1 AND account_id = $2`,
        [id, accountId],
      );
      return rows[0] ?? null;
    },

    async findByIdForUpdate(accountId: string, id: string, q: Queryable): Promise<WebhookRow | null> {
      const { rows } = await q.query<WebhookRow>(
        `SELECT ${COLUMNS} FROM webhooks WHERE id = $1 AND account_id = $2 FOR UPDATE`,
        [id, accountId],
      );
      return rows[0] ?? null;
    },

    async list(accountId: string, page: PageRequest, q: Queryable = db): Promise<Page<WebhookRow>> {
      const k = keysetTail(page, 2);
      const { rows } = await q.query<WebhookRow & { page_created_at: string }>(
        `SELECT ${COLUMNS}, ${PAGE_KEY_COLUMNS} FROM webhooks WHERE account_id = $1 ${k.where} ${k.tail}`,
        [accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    /**
     * Enabling a webhook clears why the engine disabled it and starts its failing clock afresh (the
     * right-hand `enabled` is the value before this update).
     */
    async update(accountId: string, id: string, v: WebhookValues, q: Queryable = db): Promise<WebhookRow | null> {
      const { rows } = await q.query<WebhookRow>(
        `UPDATE webhooks SET name = $3, direction = $4, url = $5, secret_sealed = $6, events = $7, enabled = $8,
           disabled_reason = CASE WHEN $8 THEN NULL ELSE disabled_reason END,
           failing_since = CASE WHEN $8 AND NOT enabled THEN NULL ELSE failing_since END,
           updated_at = now()
         WHERE id = $1 AND account_id = $2
         RETURNING ${COLUMNS}`,
        [id, accountId, v.name, v.direction, v.url, v.secretSealed, v.events, v.enabled],
      );
      return rows[0] ?? null;
    },

    /** triggerCount and lastTriggered of the webhooks that got a delivery of one event (countTriggeredSql: no lock on their rows). */
    async countTriggered(ids: string[], q: Queryable = db): Promise<void> {
      if (ids.length) await q.query(countTriggeredSql('unnest($1::uuid[])'), [ids]);
    },

    /**
     * An endpoint's health, in the transaction that records one of its attempts (engine/deliveries/attempts.ts):
     * a success clears `failing_since`; a failure sets it if unset (the first failure after a success) and,
     * when it is at least `disableAfterMs` old, disables the (still enabled, outgoing) webhook with `reason`
     * (its `$1` is the failing-since time as ISO text). Writes the row only when something changes, so the
     * attempts of a healthy webhook (or of one already failing) take no row lock until it is disabled.
     * Returns the webhook it disabled now, with the time it has failed since; null otherwise.
     */
    async recordHealth(
      id: string,
      succeeded: boolean,
      disableAfterMs: number,
      reason: (failingSince: Date) => string,
      q: Queryable = db,
    ): Promise<{ id: string; account_id: string; name: string; failing_since: Date; disabled_reason: string } | null> {
      if (succeeded) {
        await q.query(`UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, [id]);
        return null;
      }
      await q.query(`UPDATE webhooks SET failing_since = now() WHERE id = $1 AND failing_since IS NULL`, [id]);
      const { rows } = await q.query<{ failing_since: Date }>(
        `SELECT failing_since FROM webhooks
         WHERE id = $1 AND enabled AND direction = 'outgoing' AND failing_since <= now() - $2 * interval '1 millisecond'`,
        [id, disableAfterMs],
      );
      if (!rows[0]) return null;
      const { rows: disabled } = await q.query<{ id: string; account_id: string; name: string; failing_since: Date; disabled_reason: string }>(
        `UPDATE webhooks SET enabled = false, disabled_reason = $2, updated_at = now()
         WHERE id = $1 AND enabled AND failing_since <= now() - $3 * interval '1 millisecond'
         RETURNING id, account_id, name, failing_since, disabled_reason`,
        [id, reason(rows[0].failing_since), disableAfterMs],
      );
      return disabled[0] ?? null;
    },

    async delete(accountId: string, id: string, q: Queryable = db): Promise<boolean> {
      const { rowCount } = await q.query(`DELETE FROM webhooks WHERE id = $1 AND account_id = $2`, [id, accountId]);
      return rowCount === 1;
    },
  };
}
export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>;
