import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { authErrors, errorSchema, idParams, listQuery } from '../schemas/common';
import { deliveryDetailSchema, deliveryParams, deliverySchema, testEventBody, testEventSchema } from '../schemas/deliveries';
import type { DeliveryService } from '../services/delivery-service';
import { callerOf, type App } from '../types';

/** Delivery log, manual retry and test event of outgoing webhooks (DESIGN §4 Webhooks). */
export function deliveryRoutes(app: App, deps: { deliveries: DeliveryService; publicBaseUrl: string }): void {
  const { deliveries } = deps;
  const tags = ['webhooks'];
  const itemErrors = { 404: errorSchema, ...authErrors };

  app.get(
    '/api/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        description:
          'The delivery log of a webhook, newest first: one delivery per event handed to it, with its status and last attempt. ' +
          'Attempts follow WEBHOOK_RETRY_SCHEDULE until one answers 2xx within WEBHOOK_TIMEOUT_MS.',
        params: idParams,
        querystring: listQuery,
        response: { 200: z.array(deliverySchema), 400: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await deliveries.list(callerOf(request), request.params.id, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.get(
    '/api/webhooks/:id/deliveries/:deliveryId',
    {
      schema: {
        tags,
        description: 'One delivery with every attempt made (status code or error, duration), manual retries included.',
        params: deliveryParams,
        response: { 200: deliveryDetailSchema, ...itemErrors },
      },
    },
    async (request) => deliveries.get(callerOf(request), request.params.id, request.params.deliveryId),
  );

  app.post(
    '/api/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        tags,
        description:
          'Replays a delivery that succeeded, failed or was cancelled: one more attempt now, with the same event and the same ' +
          '`webhook-id`, so receivers can de-duplicate. 409 while the delivery is still pending, or when the webhook is disabled or incoming.',
        params: deliveryParams,
        response: { 202: deliverySchema, 400: errorSchema, 409: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) => reply.code(202).send(await deliveries.retry(callerOf(request), request.params.id, request.params.deliveryId)),
  );

  app.post(
    '/api/webhooks/:id/test',
    {
      schema: {
        tags,
        description:
          'Emits a `webhook.test` event delivered to this webhook only (signed like any delivery), with data ' +
          '{ webhookId, message, payload? }; its delivery shows in the delivery log. 409 when the webhook is disabled or incoming.',
        params: idParams,
        body: testEventBody,
        response: { 202: testEventSchema, 400: errorSchema, 409: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) => reply.code(202).send(await deliveries.sendTest(callerOf(request), request.params.id, request.body?.payload)),
  );
}
