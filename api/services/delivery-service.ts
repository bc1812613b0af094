import type { PageRequest } from '../../db/paging';
import type { Db } from '../../db/pool';
import type { DeliveriesRepository } from '../../db/repositories/deliveries';
import type { RecoveriesRepository } from '../../db/repositories/recoveries';
import type { RequestGuardsRepository } from '../../db/repositories/request-guards';
import type { WebhookRow, WebhooksRepository } from '../../db/repositories/webhooks';
import type { Engine } from '../../engine';
import { ConflictError, NotFoundError, TooManyRequestsError, ValidationError } from '../errors';
import { toDelivery, toDeliveryAttempt, toRecovery, type Delivery, type DeliveryAttempt, type Recovery } from '../mappers';
import { encodePairCursor, type CursorPage, type PairPageRequest } from '../pagination';
import { MAX_RECOVERY_WINDOW_DAYS, type RecoverBody } from '../schemas/deliveries';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';

/**
 * A running recovery blocks another of its webhook for at most this long after it was asked for: a recovery
 * takes minutes (a batch of RECOVERY_BATCH_SIZE is one short transaction), so one still `running` a day
 * later lost its workflow; the next request for the webhook marks it `failed` and goes ahead.
 */
const STALE_RECOVERY_MS = 86_400_000;
/** The Retry-After of that 409: a small recovery completes in seconds. */
const RECOVERY_RETRY_AFTER_S = 10;

/** Attempts a delivery's detail holds, the last ones (docs/api.md § Webhooks: GET …/attempts pages them all). */
export const DETAIL_ATTEMPTS = 20;

const TEST_MESSAGE = 'This is a test event: your endpoint received and can verify deliveries from this webhook.';

/** Only an enabled outgoing webhook sends; the message says what to change. */
function assertSends(webhook: WebhookRow): void {
  if (webhook.direction !== 'outgoing') throw new ConflictError('Webhook is incoming; only outgoing webhooks deliver events');
  if (!webhook.enabled) throw new ConflictError('Webhook is disabled; enable it to deliver events');
}

/** The delivery log of outgoing webhooks, manual retries and test events (docs/api.md § Webhooks). */
export function createDeliveryService(deps: {
  db: Db;
  webhooks: WebhooksRepository;
  deliveries: DeliveriesRepository;
  recoveries: RecoveriesRepository;
  /** The engine's unit of work: a retry's or recovery's start, a test event and its delivery, handed off after the commit. */
  engine: Pick<Engine, 'transaction'>;
  audit: AuditTrail;
  /** The rate-limit counters (manual retries per webhook per minute). */
  guards: RequestGuardsRepository;
  /** DELIVERY_RETRIES_PER_MINUTE: manual retries per webhook per minute. */
  retriesPerMinute: number;
  /** RECOVER_INTERVAL: one recovery per webhook per interval, and a delivery re-sent by one recovery per interval. */
  recoverInterval: { text: string; ms: number };
  /** DELIVERY_MAX_ATTEMPTS: attempts one delivery gets in all. */
  maxAttempts: number;
}) {
  const { webhooks, deliveries, recoveries, engine, audit, guards } = deps;

  async function webhookOf(caller: Caller, id: string): Promise<WebhookRow> {
    const row = await webhooks.findById(caller.accountId, id);
    if (!row) throw new NotFoundError('Webhook');
    return row;
  }

  return {
    async list(caller: Caller, webhookId: string, page: PageRequest) {
      await webhookOf(caller, webhookId);
      const result = await deliveries.list(caller.accountId, webhookId, page);
      return { ...result, items: result.items.map(toDelivery) };
    },

    async get(caller: Caller, webhookId: string, id: string) {
      await webhookOf(caller, webhookId);
      const row = await deliveries.find(caller.accountId, webhookId, id);
      if (!row) throw new NotFoundError('Delivery');
      return { ...toDelivery(row), attemptsDetail: (await deliveries.lastAttempts(id, DETAIL_ATTEMPTS)).map(toDeliveryAttempt) };
    },

    /** A page of the delivery's attempts, oldest first (generation, then attempt). */
    async attempts(caller: Caller, webhookId: string, id: string, page: PairPageRequest): Promise<CursorPage<DeliveryAttempt>> {
      await webhookOf(caller, webhookId);
      if (!(await deliveries.find(caller.accountId, webhookId, id))) throw new NotFoundError('Delivery');
      const after = page.after && { generation: page.after[0], attempt: page.after[1] };
      const rows = await deliveries.attemptsAfter(id, after, page.limit + 1);
      const kept = rows.slice(0, page.limit);
      const last = kept[kept.length - 1];
      return { items: kept.map(toDeliveryAttempt), cursor: rows.length > page.limit && last ? encodePairCursor([last.generation, last.attempt]) : undefined };
    },

    /**
     * Replays a delivery once, now, with the same event (same `webhook-id`): a new generation and its own
     * workflow, so the older generation's workflow makes no further attempt (a pending delivery's next
     * scheduled attempt included: it stops there). The webhook row is locked so a concurrent disable
     * either sees this delivery pending (and cancels it) or runs first (409). At most
     * DELIVERY_RETRIES_PER_MINUTE per webhook (a fixed window in Postgres, shared by every API process); 429 over it.
     */
    async retry(caller: Caller, webhookId: string, id: string): Promise<Delivery> {
      const delivery = await engine.transaction(async (tx, unit) => {
        const webhook = await webhooks.findByIdForUpdate(caller.accountId, webhookId, tx);
        if (!webhook) throw new NotFoundError('Webhook');
        const row = await deliveries.find(caller.accountId, webhookId, id, tx, true);
        if (!row) throw new NotFoundError('Delivery');
        assertSends(webhook);
        // Under the delivery's row lock: concurrent retries each see the generations committed before them.
        if (row.attempts >= deps.maxAttempts) {
          throw new ConflictError(`Delivery has had ${row.attempts} attempts, the most one delivery gets (DELIVERY_MAX_ATTEMPTS = ${deps.maxAttempts})`);
        }
        // Counted in this transaction: a refused request (this 429 included) rolls its hit back with the rest.
        const hit = await guards.hitRateLimitUpTo(`delivery-retry:${webhookId}`, 60_000, deps.retriesPerMinute, tx);
        if (!hit.allowed) {
          const seconds = Math.max(1, Math.ceil(hit.ttlMs / 1000));
          throw new TooManyRequestsError(
            `at most ${deps.retriesPerMinute} manual retries a minute per webhook (DELIVERY_RETRIES_PER_MINUTE); try again in ${seconds} s`,
            seconds,
          );
        }
        const { generation } = await deliveries.startGeneration(id, tx);
        await unit.startDelivery({ id, accountId: caller.accountId }, generation);
        await audit.record(tx, caller, 'delivery.retry', id);
        return (await deliveries.find(caller.accountId, webhookId, id, tx))!;
      });
      return toDelivery(delivery);
    },

    /**
     * Recovers the webhook's failed deliveries created in [since, until) (until: now when omitted): one
     * workflow `recovery:<id>` gives each a new generation, batch by batch (workflows/recovery.ts). 409
     * while another recovery of the webhook is running; 429 within RECOVER_INTERVAL of the last one asked
     * for (both read under the webhook's row lock, so concurrent requests and API processes agree).
     */
    async recover(caller: Caller, webhookId: string, body: RecoverBody): Promise<Recovery> {
      const since = new Date(body.since);
      const until = body.until === undefined ? new Date() : new Date(body.until);
      const untilName = body.until === undefined ? 'now (until omitted)' : 'until';
      if (since.getTime() >= until.getTime()) throw new ValidationError(`body.since: must be before ${untilName}`);
      if (until.getTime() - since.getTime() > MAX_RECOVERY_WINDOW_DAYS * 86_400_000) {
        throw new ValidationError(`body.since: must be at most ${MAX_RECOVERY_WINDOW_DAYS} days before ${untilName}`);
      }
      const recovery = await engine.transaction(async (tx, unit) => {
        const webhook = await webhooks.findByIdForUpdate(caller.accountId, webhookId, tx);
        if (!webhook) throw new NotFoundError('Webhook');
        assertSends(webhook);
        // One at a time per webhook (its row is locked): a caller repeating the request would start one more
        // recovery workflow each time, to scan a window whose failed deliveries the first one takes anyway.
        await recoveries.failStale(webhookId, STALE_RECOVERY_MS, tx);
        const running = await recoveries.findRunning(webhookId, tx);
        if (running) {
          throw new ConflictError(
            `A recovery of this webhook is still running (${running.id}): follow it with GET /api/webhooks/${webhookId}/recoveries/${running.id}, and ask again once it has completed`,
            RECOVERY_RETRY_AFTER_S,
          );
        }
        // One per RECOVER_INTERVAL: a recovery re-sends a whole window, so a loop of them (each completing in
        // seconds when its deliveries fail again at once) would turn the webhook into an amplifier.
        const waitMs = await recoveries.msUntilNextRecovery(webhookId, deps.recoverInterval.ms, tx);
        if (waitMs > 0) {
          const seconds = Math.max(1, Math.ceil(waitMs / 1000));
          throw new TooManyRequestsError(
            `at most one recovery per webhook every ${deps.recoverInterval.text} (RECOVER_INTERVAL); try again in ${seconds} s`,
            seconds,
          );
        }
        const row = await recoveries.create(tx, { accountId: caller.accountId, webhookId, since, until, intervalMs: deps.recoverInterval.ms, maxAttempts: deps.maxAttempts });
        await unit.startRecovery({ id: row.id, accountId: caller.accountId });
        await audit.record(tx, caller, 'webhook.recover', webhookId);
        return row;
      });
      return toRecovery(recovery);
    },

    /** A recovery's progress; the outcomes count the attempts it started that have ended. */
    async getRecovery(caller: Caller, webhookId: string, id: string): Promise<Recovery> {
      await webhookOf(caller, webhookId);
      const row = await recoveries.find(caller.accountId, webhookId, id);
      if (!row) throw new NotFoundError('Recovery');
      return toRecovery(row);
    },

    /** Emits a webhook.test event delivered to this webhook only (and to no trigger); `payload` is the caller's own. */
    async sendTest(caller: Caller, webhookId: string, payload?: unknown): Promise<{ eventId: string }> {
      const eventId = await engine.transaction(async (tx, unit) => {
        const webhook = await webhooks.findByIdForUpdate(caller.accountId, webhookId, tx);
        if (!webhook) throw new NotFoundError('Webhook');
        assertSends(webhook);
        const event = await unit.emit({
          accountId: caller.accountId,
          type: 'webhook.test',
          targetWebhookId: webhookId,
          data: { webhookId, message: TEST_MESSAGE, ...(payload === undefined ? {} : { payload }) },
        });
        await audit.record(tx, caller, 'webhook.test', webhookId);
        return event.id;
      });
      return { eventId };
    },
  };
}
export type DeliveryService = ReturnType<typeof createDeliveryService>;
