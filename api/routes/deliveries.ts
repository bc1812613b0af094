import { z } from 'zod';
import { pageRequest, pairPageRequest, sendPage } from '../pagination';
import { errorResponse, idParams, listQuery } from '../schemas/common';
import {
  deliveryAttemptSchema,
  deliveryDetailSchema,
  deliveryParams,
  deliverySchema,
  MAX_RECOVERY_WINDOW_DAYS,
  recoverBody,
  recoveryParams,
  recoverySchema,
  testEventBody,
  testEventSchema,
} from '../schemas/deliveries';
import type { DeliveryService } from '../services/delivery-service';
import { callerOf, type App } from '../types';

/** Delivery log, manual retry, recovery and test event of outgoing webhooks (docs/api.md § Webhooks). */
export function deliveryRoutes(
  app: App,
  deps: { deliveries: DeliveryService; publicBaseUrl: string; retriesPerMinute: number; recoverInterval: string; maxAttempts: number },
): void {
  const { deliveries } = deps;
  const tags = ['webhooks'];
  const notDelivering = 'The webhook is disabled or incoming.';

  app.get(
    '/api/webhooks/:id/deliveries',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List a webhook\'s deliveries',
        description:
          'The delivery log of a webhook, newest first: one delivery per event handed to it, with its status and last attempt. ' +
          'Attempts follow WEBHOOK_RETRY_SCHEDULE until one answers 2xx within WEBHOOK_TIMEOUT_MS.',
        params: idParams,
        querystring: listQuery,
        response: { 200: z.array(deliverySchema) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await deliveries.list(callerOf(request), request.params.id, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.get(
    '/api/webhooks/:id/deliveries/:deliveryId',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get a delivery',
        description:
          'One delivery with its last 20 attempts (status code or error, duration, response snippet), manual retries included; ' +
          '`attempts` counts them all, and GET …/attempts pages them.',
        params: deliveryParams,
        response: { 200: deliveryDetailSchema },
      },
    },
    async (request) => deliveries.get(callerOf(request), request.params.id, request.params.deliveryId),
  );

  app.get(
    '/api/webhooks/:id/deliveries/:deliveryId/attempts',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List a delivery\'s attempts',
        description:
          'Every attempt of a delivery, oldest first (by generation, then attempt), a page at a time: `Link: <…>; rel="next"` while more remain. ' +
          `A delivery has at most ${deps.maxAttempts} (DELIVERY_MAX_ATTEMPTS).`,
        params: deliveryParams,
        querystring: listQuery,
        response: { 200: z.array(deliveryAttemptSchema) },
      },
    },
    async (request, reply) =>
      sendPage(
        request,
        reply,
        await deliveries.attempts(callerOf(request), request.params.id, request.params.deliveryId, pairPageRequest(request.query)),
        deps.publicBaseUrl,
      ),
  );

  app.post(
    '/api/webhooks/:id/deliveries/:deliveryId/retry',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Retry a delivery',
        description:
          'Replays a delivery: one more attempt now, with the same event and the same `webhook-id`, so receivers can de-duplicate. ' +
          'A pending delivery is attempted now too, and its remaining scheduled attempts are not made. 409 when the webhook is disabled or incoming. ' +
          `At most ${deps.retriesPerMinute} retries a minute per webhook (DELIVERY_RETRIES_PER_MINUTE, every API instance counting together); ` +
          'over it 429 with Retry-After, nothing written. ' +
          `A delivery gets at most ${deps.maxAttempts} attempts in all (DELIVERY_MAX_ATTEMPTS: scheduled, retried and recovered together); ` +
          'a retry of one that has had them answers 409 naming the limit.',
        params: deliveryParams,
        response: {
          202: deliverySchema,
          409: errorResponse(`${notDelivering} Or the delivery has had DELIVERY_MAX_ATTEMPTS (${deps.maxAttempts}) attempts.`),
          429: errorResponse(`The webhook had ${deps.retriesPerMinute} manual retries this minute (DELIVERY_RETRIES_PER_MINUTE); Retry-After says when to ask again.`),
        },
      },
    },
    async (request, reply) => reply.code(202).send(await deliveries.retry(callerOf(request), request.params.id, request.params.deliveryId)),
  );

  app.post(
    '/api/webhooks/:id/recover',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Recover failed deliveries',
        description:
          'Attempts again, once each, every delivery of this webhook created in [since, until) that has failed (until: now when ' +
          `omitted; at most ${MAX_RECOVERY_WINDOW_DAYS} days after since), as a manual retry does: same event, same \`webhook-id\`. ` +
          'Runs in the background as one workflow, `recovery:<id>`; follow it with GET …/recoveries/:recoveryId. ' +
          `A delivery that a recovery re-sent less than ${deps.recoverInterval} (RECOVER_INTERVAL) before is left out (total does not count it). ` +
          '400 for a bad window, by rules between the fields and the clock that no JSON Schema keyword states: since must be before ' +
          'until (`body.since: must be before until`), or before now when until is omitted (`body.since: must be before now (until ' +
          `omitted)\`), and the window is at most ${MAX_RECOVERY_WINDOW_DAYS} days (\`body.since: must be at most ${MAX_RECOVERY_WINDOW_DAYS} days ` +
          'before until`, or `… before now (until omitted)`). 409 when the webhook is disabled or incoming, and while another recovery of it is running ' +
          `(with Retry-After); 429 with Retry-After within ${deps.recoverInterval} of the webhook's last recovery (one per RECOVER_INTERVAL). ` +
          'Neither answer with Retry-After is kept for an Idempotency-Key.',
        params: idParams,
        body: recoverBody,
        response: {
          202: recoverySchema,
          409: errorResponse(`${notDelivering} Or a recovery of it is still running.`),
          429: errorResponse(`The webhook's last recovery was asked for less than ${deps.recoverInterval} ago (RECOVER_INTERVAL); Retry-After says when to ask again.`),
        },
      },
    },
    async (request, reply) => reply.code(202).send(await deliveries.recover(callerOf(request), request.params.id, request.body)),
  );

  app.get(
    '/api/webhooks/:id/recoveries/:recoveryId',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get a recovery',
        description: 'A recovery\'s progress: how many failed deliveries it covers, has attempted, and how many of those attempts succeeded or failed so far.',
        params: recoveryParams,
        response: { 200: recoverySchema },
      },
    },
    async (request) => deliveries.getRecovery(callerOf(request), request.params.id, request.params.recoveryId),
  );

  app.post(
    '/api/webhooks/:id/test',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Send a test event',
        description:
          'Emits a `webhook.test` event delivered to this webhook only (signed like any delivery), with data ' +
          '{ webhookId, message, payload? }; its delivery shows in the delivery log. 409 when the webhook is disabled or incoming.',
        params: idParams,
        body: testEventBody,
        response: { 202: testEventSchema, 409: errorResponse(notDelivering) },
      },
    },
    async (request, reply) => reply.code(202).send(await deliveries.sendTest(callerOf(request), request.params.id, request.body?.payload)),
  );
}
