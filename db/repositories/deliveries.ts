import { keysetTail, toPage, type Page, type PageRequest } from '../paging';
import type { Db, Queryable } from '../pool';
import type { EventRow } from './events';
import type { WebhookRow } from './webhooks';
import { subscribedWebhook } from './event-listeners';

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
  response_snippet: string | null;
  created_at: Date;
}

/** What one attempt gives: an HTTP status, or the reason there was none. */
export interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  succeeded: boolean;
  /** The first 1 KiB at most of the response body, when it was text (lib/response-snippet.ts). */
  responseSnippet?: string | null;
}

/** An attempt's place in its delivery's order: by generation, then attempt. */
export interface AttemptKey {
  generation: number;
  attempt: number;
}

const ATTEMPT_COLUMNS = `delivery_id, generation, attempt, status_code, error, duration_ms, response_snippet, created_at`;

const COLUMNS = `d.id, d.account_id, d.webhook_id, d.event_id, e.type AS event_type, d.status, d.generation, d.attempts,
  d.last_status_code, d.last_error, d.next_attempt_at, d.created_at, d.updated_at`;
const FROM = `deliveries d JOIN events e ON e.id = d.event_id`;

export function createDeliveriesRepository(db: Queryable) {
  return {
    /** Inside the webhook update's transaction: a webhook turned off stops its deliveries (docs/api.md § Webhooks). */
    async cancelPendingDeliveries(webhookId: string, q: Queryable = db): Promise<number> {
      const { rowCount } = await q.query(
        `UPDATE deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = now() WHERE webhook_id = $1 AND status = 'pending'`,
        [webhookId],
      );
      return rowCount ?? 0;
    },

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
         WHERE ${subscribedWebhook('w', '$2', '$3', '$5')}
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

    /** The last `limit` attempts (by generation, then attempt), oldest first. */
    async lastAttempts(deliveryId: string, limit: number, q: Queryable = db): Promise<DeliveryAttemptRow[]> {
      const { rows } = await q.query<DeliveryAttemptRow>(
        `SELECT * FROM (
           SELECT ${ATTEMPT_COLUMNS} FROM delivery_attempts WHERE delivery_id = $1 ORDER BY generation DESC, attempt DESC LIMIT $2
         ) last ORDER BY generation, attempt`,
        [deliveryId, limit],
      );
      return rows;
    },

    /** Up to `limit` attempts after (generation, attempt) `after`, oldest first: a page of GET …/attempts. */
    async attemptsAfter(deliveryId: string, after: AttemptKey | null, limit: number, q: Queryable = db): Promise<DeliveryAttemptRow[]> {
      const { rows } = await q.query<DeliveryAttemptRow>(
        `SELECT ${ATTEMPT_COLUMNS} FROM delivery_attempts
         WHERE delivery_id = $1 AND ($2::int IS NULL OR (generation, attempt) > ($2::int, $3::int))
         ORDER BY generation, attempt LIMIT $4`,
        [deliveryId, after?.generation ?? null, after?.attempt ?? null, limit],
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

    /** Everything an attempt needs, in one statement. Null when the delivery (or its webhook or event, by cascade) is gone. */
    async loadForAttempt(id: string, q: Queryable = db): Promise<AttemptTarget | null> {
      const { rows } = await q.query<AttemptTarget['delivery'] & { webhook: AttemptTarget['webhook'] } & { [K in keyof EventRow as `event_${K}`]: EventRow[K] }>(
        `SELECT d.id, d.account_id, d.status, d.generation, d.attempts,
           json_build_object('id', w.id, 'enabled', w.enabled, 'direction', w.direction, 'url', w.url, 'secret_sealed', w.secret_sealed) AS webhook,
           e.id AS event_id, e.account_id AS event_account_id, e.type AS event_type, e.data AS event_data, e.chain_depth AS event_chain_depth,
           e.target_webhook_id AS event_target_webhook_id, coalesce(e.root_event_id, e.id) AS event_root_event_id, e.created_at AS event_created_at
         FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id WHERE d.id = $1`,
        [id],
      );
      const r = rows[0];
      if (!r) return null;
      const event: EventRow = {
        id: r.event_id,
        account_id: r.event_account_id,
        type: r.event_type,
        data: r.event_data,
        chain_depth: r.event_chain_depth,
        target_webhook_id: r.event_target_webhook_id,
        root_event_id: r.event_root_event_id,
        created_at: r.event_created_at,
      };
      return { delivery: { id: r.id, account_id: r.account_id, status: r.status, generation: r.generation, attempts: r.attempts }, webhook: r.webhook, event };
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
        `INSERT INTO delivery_attempts (delivery_id, generation, attempt, status_code, error, duration_ms, response_snippet)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (delivery_id, generation, attempt) DO UPDATE
           SET status_code = EXCLUDED.status_code, error = EXCLUDED.error, duration_ms = EXCLUDED.duration_ms,
               response_snippet = EXCLUDED.response_snippet, created_at = now()`,
        [at.deliveryId, at.generation, at.attempt, result.statusCode, result.error, result.durationMs, result.responseSnippet ?? null],
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

    /**
     * An attempt that failed for good (every Temporal retry of the activity): the delivery fails with the
     * reason, instead of staying pending with nothing left to attempt it.
     */
    async failForGood(id: string, generation: number, error: string, q: Queryable = db): Promise<void> {
      await q.query(
        `UPDATE deliveries SET status = 'failed', last_error = left($3, 500), next_attempt_at = NULL, updated_at = now()
         WHERE id = $1 AND generation = $2 AND status = 'pending'`,
        [id, generation, error],
      );
    },

    /** The attempt already stored for this (generation, attempt), if any: a retried activity's earlier result. */
    async findAttempt(deliveryId: string, generation: number, attempt: number, q: Queryable = db): Promise<DeliveryAttemptRow | null> {
      const { rows } = await q.query<DeliveryAttemptRow>(
        `SELECT delivery_id, generation, attempt, status_code, error, duration_ms, response_snippet, created_at FROM delivery_attempts
         WHERE delivery_id = $1 AND generation = $2 AND attempt = $3`,
        [deliveryId, generation, attempt],
      );
      return rows[0] ?? null;
    },
  };
}
export type DeliveriesRepository = ReturnType<typeof createDeliveriesRepository>;

export interface AttemptTarget {
  delivery: { id: string; account_id: string; status: DeliveryStatus; generation: number; attempts: number };
  webhook: Pick<WebhookRow, 'id' | 'enabled' | 'direction' | 'url' | 'secret_sealed'>;
  event: EventRow;
}

/** A delivery's place at its webhook (DELIVERY_CONCURRENCY_PER_WEBHOOK, docs/architecture.md § Limits and fairness). */
export interface SlotRequest {
  webhookId: string;
  deliveryId: string;
  generation: number;
}

/**
 * At most `limit` attempts in flight per webhook, across every worker process: each attempt holds a
 * lease row until it ends (or its lease expires: a killed worker cannot keep a slot), and a delivery
 * that finds no slot waits in line by arrival. The rows of one webhook are changed under a
 * transaction-scoped advisory lock, so two workers never both take its last slot. Each call is one
 * statement, a function of migration 23 that takes the lock and does the work inside Postgres
 * (docs/adr/0012-fewer-round-trips-per-hook.md).
 */
export function createDeliverySlotsRepository(db: Db) {
  return {
    /**
     * Takes a slot for the delivery: granted when fewer than `limit` attempts are in flight besides
     * those of the deliveries waiting ahead of it in line; otherwise it (stays) in line. An attempt
     * retried after its worker died finds its own lease and keeps it. `leaseMs`: how long a slot is
     * held at most (past the attempt's time limit); `waitMs`: how long a place in line is kept without
     * the delivery asking again.
     */
    async acquire(s: SlotRequest, limit: number, leaseMs: number, waitMs: number): Promise<boolean> {
      const { rows } = await db.query<{ granted: boolean }>(`SELECT delivery_slot_acquire($1, $2, $3, $4, $5, $6) AS granted`, [
        s.webhookId,
        s.deliveryId,
        s.generation,
        limit,
        leaseMs,
        waitMs,
      ]);
      return rows[0]!.granted;
    },

    /**
     * Gives the delivery's slot (or place in line) back. Returns the deliveries now at the front of
     * the line that may take the free slots, oldest first: the caller tells them (a signal).
     */
    async release(s: SlotRequest, limit: number): Promise<{ deliveryId: string; generation: number }[]> {
      const { rows } = await db.query<{ next_delivery_id: string; next_generation: number }>(
        `SELECT next_delivery_id, next_generation FROM delivery_slot_release($1, $2, $3, $4)`,
        [s.webhookId, s.deliveryId, s.generation, limit],
      );
      return rows.map((r) => ({ deliveryId: r.next_delivery_id, generation: r.next_generation }));
    },
  };
}
export type DeliverySlotsRepository = ReturnType<typeof createDeliverySlotsRepository>;
