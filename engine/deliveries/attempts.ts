import { WorkflowNotFoundError } from '@temporalio/client';
import { createAuditRepository } from '../../db/repositories/audit';
import {
  createDeliveriesRepository,
  createDeliverySlotsRepository,
  type AttemptResult,
  type AttemptTarget,
  type SlotRequest,
} from '../../db/repositories/deliveries';
import { eventEnvelope } from '../events/envelope';
import { createOutboxRepository } from '../../db/repositories/outbox';
import { createWebhooksRepository } from '../../db/repositories/webhooks';
import type { Client } from '@temporalio/client';
import type { Db } from '../../db/pool';
import type { AttemptAnswer } from '../contract';
import type { Config } from '../../lib/config';
import type { Transaction, Unit } from '../unit';
import { OutboundError, retryAfterMs, sendOutbound } from '../../lib/outbound-http';
import { responseSnippet } from '../../lib/response-snippet';
import { inSpan } from '../../lib/tracing/context';
import type { SecretBox } from '../../lib/secrets';
import type { SlotWaits } from './slot-waits';
import { standardWebhookHeaders } from '../../lib/standard-webhooks';
import { SLOT_FREED_SIGNAL, SLOT_WAIT_MS, workflowIds } from '../temporal/names';

export interface AttemptInput {
  deliveryId: string;
  generation: number;
  /** 1-based index in this generation's schedule. */
  attempt: number;
  /** Delay before the next attempt; null when this is the last one. */
  nextDelayMs: number | null;
  timeoutMs: number;
  /** Answer 'retry' as { step: 'retry', delayMs } (RetryIn): the delay chosen, Retry-After included. */
  answerDelay?: boolean;
}

const MAX_ERROR_CHARS = 500;

/** A `Retry-After` moves the next attempt at most this far (a day), however far it asks. */
export const MAX_RETRY_AFTER_MS = 86_400_000;

/** The statuses whose `Retry-After` is honoured: too many requests, unavailable. */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

/**
 * The delay before the next attempt: the schedule's, or the endpoint's `Retry-After` when it asks for
 * more (capped at MAX_RETRY_AFTER_MS); null when no attempt remains (a Retry-After changes nothing then).
 */
export function nextDelay(scheduledMs: number | null, askedMs: number | null): number | null {
  if (scheduledMs === null) return null;
  if (askedMs === null) return scheduledMs;
  return Math.max(scheduledMs, Math.min(askedMs, MAX_RETRY_AFTER_MS));
}

/** Why the engine disabled a webhook (its `disabledReason`, and the data of its `webhook.disabled` event). */
export const disabledReason = (failingSince: Date, disableAfter: string) =>
  `every delivery attempt failed since ${failingSince.toISOString()} (WEBHOOK_DISABLE_AFTER=${disableAfter})`;

/** A slot is held at most this long past the attempt's time limit (then a dead worker's slot is free again). */
const LEASE_MARGIN_MS = 10_000;
/** A place in line is kept this long without the delivery asking again (it asks at least every SLOT_WAIT_MS). */
const WAITER_TTL_MS = 3 * SLOT_WAIT_MS;

/**
 * Delivery attempts, made by the delivery workflow's activity (activities/deliveries.ts) and, for a
 * delivery's first attempt, by the process that wrote the delivery (engine/deliveries/first-attempts.ts).
 */
export function createDeliveryAttempts(deps: {
  db: Db;
  config: Config;
  secrets: SecretBox;
  client: Client;
  /** The engine's unit of work: an attempt that disables its webhook emits `webhook.disabled` in it. */
  transaction: Transaction;
  /** The process's slot waits: an attempt ending here wakes a first attempt waiting here. */
  slotWaits: SlotWaits;
}) {
  const { db, config, secrets, client, transaction, slotWaits } = deps;
  const deliveries = createDeliveriesRepository(db);
  const slots = createDeliverySlotsRepository(db);
  const outbox = createOutboxRepository(db);
  const concurrency = config.webhooks.concurrencyPerWebhook;
  const { disableAfter } = config.webhooks;

  /** One POST of the envelope; an HTTP failure is a result to store, not an activity failure. */
  async function send(url: string, headers: Record<string, string>, body: string, timeoutMs: number, signal?: AbortSignal): Promise<AttemptResult & { retryAfterMs: number | null }> {
    const started = performance.now();
    const durationMs = () => Math.round(performance.now() - started);
    try {
      const res = await sendOutbound({
        url, method: 'POST', headers, body, timeoutMs, allowPrivate: config.webhooks.allowPrivateTargets, dnsServers: config.network.dnsServers, maxResponseBytes: 4096,
        signal,
      });
      const succeeded = res.status >= 200 && res.status < 300;
      const asked = RETRY_AFTER_STATUSES.has(res.status) ? retryAfterMs(res.headers['retry-after']) : null;
      return { statusCode: res.status, error: succeeded ? null : `HTTP ${res.status}`, durationMs: durationMs(), succeeded, retryAfterMs: asked, responseSnippet: responseSnippet(res.bytes, res.headers) };
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err; // a bug, not the receiver: let Temporal retry the activity
      // Cut by us (the worker shutting down past its grace), not by the receiver: no attempt is recorded;
      // Temporal makes it again, with the same webhook-id.
      if (signal?.aborted) throw err;
      return { statusCode: null, error: err.message.slice(0, MAX_ERROR_CHARS), durationMs: durationMs(), succeeded: false, retryAfterMs: null };
    }
  }

  /**
   * A webhook the engine has just disabled (its every attempt failed for WEBHOOK_DISABLE_AFTER, docs/api.md §
   * Webhooks), in the same transaction: its pending deliveries are cancelled (as when a user disables it),
   * the platform's audit entry written, and a `webhook.disabled` event fanned out to the account's other
   * webhooks subscribed to it (this one is no longer enabled, so it gets none).
   */
  async function announceDisabled(unit: Unit, disabled: { id: string; account_id: string; name: string; failing_since: Date; disabled_reason: string }) {
    const { tx } = unit;
    await deliveries.cancelPendingDeliveries(disabled.id, tx);
    await createAuditRepository(tx).insert(
      { accountId: disabled.account_id, actorUserId: null, action: 'webhook.disable', resourceType: 'webhook', resourceId: disabled.id },
      tx,
    );
    await unit.emit({
      accountId: disabled.account_id,
      type: 'webhook.disabled',
      data: { webhookId: disabled.id, name: disabled.name, reason: disabled.disabled_reason, failingSince: disabled.failing_since.toISOString() },
    });
  }

  /** Slot times: a lease outlives the attempt's own time limit; a place in line outlives a waiter's safety timer. */
  const slotTimes = (timeoutMs: number) => ({ leaseMs: timeoutMs + LEASE_MARGIN_MS, waitMs: WAITER_TTL_MS });

  /**
   * Gives back the delivery's slot or place in line and tells the deliveries at the front of the line:
   * a first attempt waiting in this process is woken here (engine/deliveries/slot-waits.ts), a delivery workflow is
   * signalled. A waiter without a workflow leaves the line, and the next one is told instead, unless its
   * workflow start is still in the outbox (a first attempt waiting in another process, which polls, or
   * a start on its way); a waiter whose workflow is gone (terminated by an operator) leaves it too. Any
   * other failure to signal is covered by the waiter's safety timer.
   */
  async function releaseSlot(slot: SlotRequest): Promise<void> {
    let next = await slots.release(slot, concurrency);
    slotWaits.slotFreedHere(slot.webhookId);
    while (next.length > 0) {
      const gone: typeof next = [];
      for (const waiter of next) {
        if (slotWaits.wakeSlotWaiter(waiter)) continue;
        const workflowId = workflowIds.delivery(waiter.deliveryId, waiter.generation);
        try {
          await client.workflow.getHandle(workflowId).signal(SLOT_FREED_SIGNAL);
        } catch (err) {
          if (err instanceof WorkflowNotFoundError && !(await outbox.hasStart(workflowId))) gone.push(waiter);
        }
      }
      next = [];
      for (const waiter of gone) next.push(...(await slots.release({ webhookId: slot.webhookId, ...waiter }, concurrency)));
    }
  }

  return {
    /**
     * One attempt of a delivery (docs/architecture.md § When a delivery is made): the event's envelope, the same bytes and `webhook-id`
     * on every attempt, signed when the webhook has a secret, sent to the target re-checked for SSRF.
     * Only DELIVERY_CONCURRENCY_PER_WEBHOOK attempts per webhook are in flight at once: without a free
     * slot nothing is sent and 'wait' is answered (no attempt is used); the workflow waits for the
     * signal of an attempt that ends. 'stopped' when the delivery is gone, no longer pending,
     * superseded by a manual retry, or its webhook was disabled (the delivery is then cancelled).
     */
    attempt: async (input: AttemptInput, signal?: AbortSignal): Promise<AttemptAnswer> => (await attemptAt(input, signal)).step,

    /** The same, also naming the delivery's account and webhook once it was found (a first attempt that must wait). */
    attemptAt,

    /**
     * The delivery workflow's last word when its attempt failed for good (every Temporal retry): the
     * delivery fails with the reason, and its slot or place in line is given back.
     */
    async failForGood(input: { deliveryId: string; generation: number; error: string }): Promise<void> {
      await deliveries.failForGood(input.deliveryId, input.generation, `internal error: ${input.error}`);
      const target = await deliveries.loadForAttempt(input.deliveryId);
      if (target) await releaseSlot({ webhookId: target.webhook.id, deliveryId: input.deliveryId, generation: input.generation });
    },
  };

  /** One attempt, as `attempt` above says, in a span of its own (tracing on): its POST is a child span, and sends `traceparent`. */
  function attemptAt(input: AttemptInput, signal?: AbortSignal): Promise<{ step: AttemptAnswer; accountId?: string; webhookId?: string }> {
    const attributes = { 'delivery.id': input.deliveryId, 'delivery.generation': input.generation, 'delivery.attempt': input.attempt };
    return inSpan('delivery attempt', attributes, async () => {
      const target = await deliveries.loadForAttempt(input.deliveryId);
      if (!target) return { step: 'stopped' as const };
      const step = await attemptOn(target, input, signal);
      return { step, accountId: target.delivery.account_id, webhookId: target.webhook.id };
    });
  }

  async function attemptOn(target: AttemptTarget, input: AttemptInput, signal?: AbortSignal): Promise<AttemptAnswer> {
    const slot: SlotRequest = { webhookId: target.webhook.id, deliveryId: input.deliveryId, generation: input.generation };
    if (target.delivery.generation !== input.generation) {
      await releaseSlot(slot);
      return 'stopped';
    }
    const { delivery, webhook, event } = target;
    if (delivery.status !== 'pending') {
      await releaseSlot(slot);
      // This activity may be a retry of one that recorded its result and then died: answer that result.
      const earlier = await deliveries.findAttempt(delivery.id, input.generation, input.attempt);
      if (earlier && (delivery.status === 'succeeded' || delivery.status === 'failed')) return delivery.status;
      return 'stopped';
    }
    if (!webhook.enabled || webhook.direction !== 'outgoing' || webhook.url === null) {
      await deliveries.cancel(delivery.id, input.generation);
      await releaseSlot(slot);
      return 'stopped';
    }
    if (delivery.attempts >= config.webhooks.maxAttempts) {
      // Retries and recoveries are refused at the limit; this covers a schedule longer than it.
      await deliveries.failForGood(delivery.id, input.generation, `attempted ${delivery.attempts} times, the most one delivery gets (DELIVERY_MAX_ATTEMPTS)`);
      await releaseSlot(slot);
      return 'failed';
    }

    const { leaseMs, waitMs } = slotTimes(input.timeoutMs);
    if (!(await slots.acquire(slot, concurrency, leaseMs, waitMs))) return 'wait';
    try {
      const body = JSON.stringify(eventEnvelope(event));
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (webhook.secret_sealed !== null) {
        Object.assign(headers, standardWebhookHeaders(secrets.open(webhook.secret_sealed), event.id, body, new Date()));
      }
      const { retryAfterMs: asked, ...result } = await send(webhook.url, headers, body, input.timeoutMs, signal);
      const delayMs = nextDelay(input.nextDelayMs, asked);

      const { status, disabled } = await transaction(async (tx, unit) => {
        // The webhook's health first: its row is locked before the delivery's, in the order a user's update takes them.
        const reason = (since: Date) => disabledReason(since, disableAfter.text);
        const disabled = await createWebhooksRepository(tx).recordHealth(webhook.id, result.succeeded, disableAfter.ms, reason);
        const status = await deliveries.recordAttempt(tx, { ...input, nextDelayMs: delayMs, deliveryId: delivery.id }, result);
        if (disabled) await announceDisabled(unit, disabled);
        return { status, disabled: disabled !== null };
      });
      if (status === null || (disabled && status === 'pending')) return 'stopped'; // cancelled with its webhook
      if (status === 'pending') return input.answerDelay ? { step: 'retry', delayMs: delayMs! } : 'retry';
      return status === 'succeeded' ? 'succeeded' : 'failed';
    } finally {
      await releaseSlot(slot);
    }
  }
}
export type DeliveryAttempts = ReturnType<typeof createDeliveryAttempts>;
