import { keysetTail, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';
import { findEvent, type EventRow } from './events';
import type { WebhookRow } from './webhooks';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

/** A delivery with its event's type (the log shows it). */
export interface DeliveryRow {
  id: string;
  account_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  generation: number;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryAttemptRow {
  delivery_id: string;
  generation: number;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: Date;
}

/** What one attempt gives: an HTTP status, or the reason there was none. */
export interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  succeeded: boolean;
}

const COLUMNS = `d.id, d.account_id, d.webhook_id, d.event_id, e.type AS event_type, d.status, d.generation, d.attempts,
  d.last_status_code, d.last_error, d.next_attempt_at, d.created_at, d.updated_at`;
const FROM = `deliveries d JOIN events e ON e.id = d.event_id`;

/** Inside the webhook update's transaction: a webhook turned off stops its deliveries (DESIGN §4). */
export async function cancelPendingDeliveries(q: Queryable, webhookId: string): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = now() WHERE webhook_id = $1 AND status = 'pending'`,
    [webhookId],
  );
  return rowCount ?? 0;
}

export function createDeliveriesRepository(db: Queryable) {
  return {
    /**
     * A pending delivery of the event to each enabled outgoing webhook subscribed to its type (or `*`),
     * or to its target webhook only (webhook.test), first attempt due after `firstDelayMs`. Unique per
     * (event, webhook): a repeated fan-out creates none again. Returns only the deliveries created now.
     */
    async createForEvent(
      event: Pick<EventRow, 'id' | 'account_id' | 'type' | 'target_webhook_id'>,
      firstDelayMs: number,
      q: Queryable = db,
    ): Promise<{ id: string; webhook_id: string }[]> {
      const { rows } = await q.query<{ id: string; webhook_id: string }>(
        `INSERT INTO deliveries (account_id, webhook_id, event_id, next_attempt_at)
         SELECT w.account_id, w.id, $1, now() + $4 * interval '1 millisecond' FROM webhooks w
         WHERE w.account_id = $2 AND w.direction = 'outgoing' AND w.enabled
           AND (CASE WHEN $5::uuid IS NOT NULL THEN w.id = $5::uuid ELSE w.events && ARRAY[$3, '*'] END)
         ON CONFLICT (event_id, webhook_id) DO NOTHING
         RETURNING id, webhook_id`,
        [event.id, event.account_id, event.type, firstDelayMs, event.target_webhook_id],
      );
      return rows;
    },

    async list(accountId: string, webhookId: string, page: PageRequest, q: Queryable = db): Promise<Page<DeliveryRow>> {
      const k = keysetTail(page, 3, 'd');
      const { rows } = await q.query<DeliveryRow & { page_created_at: string }>(
        `SELECT ${COLUMNS}, d.created_at::text AS page_created_at FROM ${FROM}
         WHERE d.webhook_id = $1 AND d.account_id = $2 ${k.where} ${k.tail}`,
        [webhookId, accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    /** `lock` takes the row for a state change (manual retry). */
    async find(accountId: string, webhookId: string, id: string, q: Queryable = db, lock = false): Promise<DeliveryRow | null> {
      const { rows } = await q.query<DeliveryRow>(
        `SELECT ${COLUMNS} FROM ${FROM} WHERE d.id = $1 AND d.webhook_id = $2 AND d.account_id = $3 ${lock ? 'FOR UPDATE OF d' : ''}`,
        [id, webhookId, accountId],
      );
      return rows[0] ?? null;
    },

    /** Every attempt of every generation, oldest first. */
    async attempts(deliveryId: string, q: Queryable = db): Promise<DeliveryAttemptRow[]> {
      const { rows } = await q.query<DeliveryAttemptRow>(
        `SELECT delivery_id, generation, attempt, status_code, error, duration_ms, created_at FROM delivery_attempts
         WHERE delivery_id = $1 ORDER BY generation, attempt`,
        [deliveryId],
      );
      return rows;
    },

    /** A manual retry: a new generation, pending now; the older generation's workflow no longer attempts. */
    async startGeneration(id: string, q: Queryable = db): Promise<{ generation: number }> {
      const { rows } = await q.query<{ generation: number }>(
        `UPDATE deliveries SET generation = generation + 1, status = 'pending', next_attempt_at = now(), updated_at = now()
         WHERE id = $1 RETURNING generation`,
        [id],
      );
      return rows[0]!;
    },

    /** Everything an attempt needs. Null when the delivery (or its webhook or event, by cascade) is gone. */
    async loadForAttempt(id: string, q: Queryable = db): Promise<AttemptTarget | null> {
      const { rows } = await q.query<AttemptTarget['delivery'] & { event_id: string; webhook: AttemptTarget['webhook'] }>(
        `SELECT d.id, d.status, d.generation, d.event_id,
           json_build_object('enabled', w.enabled, 'direction', w.direction, 'url', w.url, 'secret_sealed', w.secret_sealed) AS webhook
         FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = $1`,
        [id],
      );
      const r = rows[0];
      if (!r) return null;
      const event = await findEvent(q, r.event_id);
      if (!event) return null;
      return { delivery: { id: r.id, status: r.status, generation: r.generation }, webhook: r.webhook, event };
    },

    /** Marks a pending delivery cancelled (its webhook was disabled or stopped being outgoing). */
    async cancel(id: string, generation: number, q: Queryable = db): Promise<void> {
      await q.query(
        `UPDATE deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = now()
         WHERE id = $1 AND generation = $2 AND status = 'pending'`,
        [id, generation],
      );
    },

    /**
     * Stores one attempt and moves the delivery on. The attempt row is keyed (delivery, generation,
     * attempt), so an activity retried after a crash overwrites its own row instead of counting twice;
     * `attempts` is the number of rows. The status moves only while the delivery is still pending in
     * this generation (not cancelled or superseded meanwhile). Returns the new status, or null if it
     * did not move.
     */
    async recordAttempt(
      q: Queryable,
      at: { deliveryId: string; generation: number; attempt: number; nextDelayMs: number | null },
      result: AttemptResult,
    ): Promise<DeliveryStatus | null> {
      await q.query(
        `INSERT INTO delivery_attempts (delivery_id, generation, attempt, status_code, error, duration_ms)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (delivery_id, generation, attempt) DO UPDATE
           SET status_code = EXCLUDED.status_code, error = EXCLUDED.error, duration_ms = EXCLUDED.duration_ms, created_at = now()`,
        [at.deliveryId, at.generation, at.attempt, result.statusCode, result.error, result.durationMs],
      );
      const status: DeliveryStatus = result.succeeded ? 'succeeded' : at.nextDelayMs === null ? 'failed' : 'pending';
      const { rows } = await q.query<{ status: DeliveryStatus }>(
        `UPDATE deliveries SET
           attempts = (SELECT count(*) FROM delivery_attempts WHERE delivery_id = $1),
           last_status_code = $3, last_error = $4, status = $5,
           next_attempt_at = CASE WHEN $5 = 'pending' THEN now() + $6 * interval '1 millisecond' END,
           updated_at = now()
         WHERE id = $1 AND generation = $2 AND status = 'pending'
         RETURNING status`,
        [at.deliveryId, at.generation, result.statusCode, result.error, status, at.nextDelayMs ?? 0],
      );
      if (rows[0]) return rows[0].status;
      // Cancelled or superseded while the request was out: the attempt still happened, so it still counts.
      await q.query(`UPDATE deliveries SET attempts = (SELECT count(*) FROM delivery_attempts WHERE delivery_id = $1) WHERE id = $1`, [
        at.deliveryId,
      ]);
      return null;
    },

    /** The attempt already stored for this (generation, attempt), if any: a retried activity's earlier result. */
    async findAttempt(deliveryId: string, generation: number, attempt: number, q: Queryable = db): Promise<DeliveryAttemptRow | null> {
      const { rows } = await q.query<DeliveryAttemptRow>(
        `SELECT delivery_id, generation, attempt, status_code, error, duration_ms, created_at FROM delivery_attempts
         WHERE delivery_id = $1 AND generation = $2 AND attempt = $3`,
        [deliveryId, generation, attempt],
      );
      return rows[0] ?? null;
    },
  };
}
export type DeliveriesRepository = ReturnType<typeof createDeliveriesRepository>;

export interface AttemptTarget {
  delivery: { id: string; status: DeliveryStatus; generation: number };
  webhook: Pick<WebhookRow, 'enabled' | 'direction' | 'url' | 'secret_sealed'>;
  event: EventRow;
}
