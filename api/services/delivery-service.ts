import type { PageRequest } from '../../db/paging';
import { withTransaction, type Db } from '../../db/pool';
import type { DeliveriesRepository } from '../../db/repositories/deliveries';
import type { RecoveriesRepository } from '../../db/repositories/recoveries';
import { insertEvent } from '../../db/repositories/events';
import type { WebhookRow, WebhooksRepository } from '../../db/repositories/webhooks';
import { startDelivery, startRecovery } from '../../lib/engine-starts';
import type { EventFanOut } from '../../lib/event-fan-out';
import type { HandOff } from '../../lib/handoff';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import { toDelivery, toDeliveryAttempt, toRecovery, type Delivery, type Recovery } from '../mappers';
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

const TEST_MESSAGE = 'This is a test event: your endpoint received and can verify deliveries from this webhook.';

/** Only an enabled outgoing webhook sends; the message says what to change. */
function assertSends(webhook: WebhookRow): void {
  if (webhook.direction !== 'outgoing') throw new ConflictError('Webhook is incoming; only outgoing webhooks deliver events');
  if (!webhook.enabled) throw new ConflictError('Webhook is disabled; enable it to deliver events');
}

/** The delivery log of outgoing webhooks, manual retries and test events (README § Webhooks). */
export function createDeliveryService(deps: {
  db: Db;
  webhooks: WebhooksRepository;
  deliveries: DeliveriesRepository;
  recoveries: RecoveriesRepository;
  handOff: HandOff;
  /** Writes a test event's delivery in its transaction. */
  fanOut: EventFanOut;
  timeoutMs: number;
  audit: AuditTrail;
}) {
  const { db, webhooks, deliveries, recoveries, handOff, audit } = deps;

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
      return { ...toDelivery(row), attemptsDetail: (await deliveries.attempts(id)).map(toDeliveryAttempt) };
    },

    /**
     * Replays a delivery once, now, with the same event (same `webhook-id`): a new generation and its own
     * workflow, so the older generation's workflow makes no further attempt (a pending delivery's next
     * scheduled attempt included: it stops there). The webhook row is locked so a concurrent disable
     * either sees this delivery pending (and cancels it) or runs first (409).
     */
    async retry(caller: Caller, webhookId: string, id: string): Promise<Delivery> {
      const delivery = await withTransaction(db, async (tx) => {
        const webhook = await webhooks.findByIdForUpdate(caller.accountId, webhookId, tx);
        if (!webhook) throw new NotFoundError('Webhook');
        const row = await deliveries.find(caller.accountId, webhookId, id, tx, true);
        if (!row) throw new NotFoundError('Delivery');
        assertSends(webhook);
        const { generation } = await deliveries.startGeneration(id, tx);
        await startDelivery(tx, { id, accountId: caller.accountId }, generation, { delaysMs: [0], timeoutMs: deps.timeoutMs });
        await audit.record(tx, caller, 'delivery.retry', id);
        return (await deliveries.find(caller.accountId, webhookId, id, tx))!;
      });
      handOff.kick();
      return toDelivery(delivery);
    },

    /**
     * Recovers the webhook's failed deliveries created in [since, until) (until: now when omitted): one
     * workflow `recovery:<id>` gives each a new generation, batch by batch (workflows/recovery.ts). 409
     * while another recovery of the webhook is running.
     */
    async recover(caller: Caller, webhookId: string, body: RecoverBody): Promise<Recovery> {
      const since = new Date(body.since);
      const until = body.until === undefined ? new Date() : new Date(body.until);
      const untilName = body.until === undefined ? 'now (until omitted)' : 'until';
      if (since.getTime() >= until.getTime()) throw new ValidationError(`body.since: must be before ${untilName}`);
      if (until.getTime() - since.getTime() > MAX_RECOVERY_WINDOW_DAYS * 86_400_000) {
        throw new ValidationError(`body.since: must be at most ${MAX_RECOVERY_WINDOW_DAYS} days before ${untilName}`);
      }
      const recovery = await withTransaction(db, async (tx) => {
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
        const row = await recoveries.create(tx, { accountId: caller.accountId, webhookId, since, until });
        await startRecovery(tx, { id: row.id, accountId: caller.accountId });
        await audit.record(tx, caller, 'webhook.recover', webhookId);
        return row;
      });
      handOff.kick();
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
      const { eventId, held } = await withTransaction(db, async (tx) => {
        const webhook = await webhooks.findByIdForUpdate(caller.accountId, webhookId, tx);
        if (!webhook) throw new NotFoundError('Webhook');
        assertSends(webhook);
        const event = await insertEvent(tx, {
          accountId: caller.accountId,
          type: 'webhook.test',
          targetWebhookId: webhookId,
          data: { webhookId, message: TEST_MESSAGE, ...(payload === undefined ? {} : { payload }) },
        });
        const { held } = await deps.fanOut.fanOutEvent(tx, event);
        await audit.record(tx, caller, 'webhook.test', webhookId);
        return { eventId: event.id, held };
      });
      handOff.kick(held);
      return { eventId };
    },
  };
}
export type DeliveryService = ReturnType<typeof createDeliveryService>;
