import { withTransaction } from '../db/pool';
import { createDeliveriesRepository, type AttemptResult } from '../db/repositories/deliveries';
import { eventEnvelope } from '../db/repositories/events';
import { OutboundError, sendOutbound } from '../lib/outbound-http';
import { standardWebhookHeaders } from '../lib/standard-webhooks';
import type { AttemptOutcome } from '../workflows/types';
import type { ActivityDeps } from './deps';

export interface AttemptInput {
  deliveryId: string;
  generation: number;
  /** 1-based index in this generation's schedule. */
  attempt: number;
  /** Delay before the next attempt; null when this is the last one. */
  nextDelayMs: number | null;
  timeoutMs: number;
}

const MAX_ERROR_CHARS = 500;

export function createDeliveryActivities(deps: ActivityDeps) {
  const { db, config, secrets } = deps;
  const deliveries = createDeliveriesRepository(db);

  /** One POST of the envelope; an HTTP failure is a result to store, not an activity failure. */
  async function send(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<AttemptResult> {
    const started = performance.now();
    const durationMs = () => Math.round(performance.now() - started);
    try {
      const res = await sendOutbound({ url, method: 'POST', headers, body, timeoutMs, allowPrivate: config.webhooks.allowPrivateTargets, maxResponseBytes: 4096 });
      const succeeded = res.status >= 200 && res.status < 300;
      return { statusCode: res.status, error: succeeded ? null : `HTTP ${res.status}`, durationMs: durationMs(), succeeded };
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err; // a bug, not the receiver: let Temporal retry the activity
      return { statusCode: null, error: err.message.slice(0, MAX_ERROR_CHARS), durationMs: durationMs(), succeeded: false };
    }
  }

  return {
    /**
     * One attempt of a delivery (DESIGN §4, §5): the event's envelope, the same bytes and `webhook-id`
     * on every attempt, signed when the webhook has a secret, sent to the target re-checked for SSRF.
     * 'stopped' when the delivery is gone, no longer pending, superseded by a manual retry, or its
     * webhook was disabled (the delivery is then cancelled).
     */
    async attemptDelivery(input: AttemptInput): Promise<AttemptOutcome> {
      const target = await deliveries.loadForAttempt(input.deliveryId);
      if (!target || target.delivery.generation !== input.generation) return 'stopped';
      const { delivery, webhook, event } = target;
      if (delivery.status !== 'pending') {
        // This activity may be a retry of one that recorded its result and then died: answer that result.
        const earlier = await deliveries.findAttempt(delivery.id, input.generation, input.attempt);
        if (earlier && (delivery.status === 'succeeded' || delivery.status === 'failed')) return delivery.status;
        return 'stopped';
      }
      if (!webhook.enabled || webhook.direction !== 'outgoing' || webhook.url === null) {
        await deliveries.cancel(delivery.id, input.generation);
        return 'stopped';
      }

      const body = JSON.stringify(eventEnvelope(event));
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (webhook.secret_sealed !== null) {
        Object.assign(headers, standardWebhookHeaders(secrets.open(webhook.secret_sealed), event.id, body, new Date()));
      }
      const result = await send(webhook.url, headers, body, input.timeoutMs);

      const status = await withTransaction(db, (tx) => deliveries.recordAttempt(tx, { ...input, deliveryId: delivery.id }, result));
      if (status === null) return 'stopped';
      return status === 'pending' ? 'retry' : status === 'succeeded' ? 'succeeded' : 'failed';
    },
  };
}
