import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { errorResponse, idParams, listQuery, noContent, URL_LOOKUPS_BUSY } from '../schemas/common';
import { createWebhookBody, updateWebhookBody, webhookSchema, type CreateWebhookInput } from '../schemas/webhooks';
import type { WebhookService } from '../services/webhook-service';
import { callerOf, type App } from '../types';

export function webhookRoutes(app: App, deps: { webhooks: WebhookService; publicBaseUrl: string }): void {
  const { webhooks } = deps;
  const tags = ['webhooks'];

  app.get(
    '/api/webhooks',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List webhooks',
        description: 'Your webhooks, outgoing and incoming, newest first. Secrets are masked.',
        querystring: listQuery,
        response: { 200: z.array(webhookSchema) },
      },
    },
    async (request, reply) => sendPage(request, reply, await webhooks.list(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/webhooks',
    {
      config: { access: 'write', preflight: (request) => webhooks.checkCreate(callerOf(request), request.body as CreateWebhookInput) },
      schema: {
        tags,
        summary: 'Create a webhook',
        description:
          'Creates a webhook. Outgoing (default): every event of its types is delivered to url, signed (Standard Webhooks) when it ' +
          'has a secret; url is refused when it points at a private, loopback or link-local address (unless ALLOW_PRIVATE_TARGETS). ' +
          'Incoming: others post to the URL the response shows, which emits webhook.received; any url sent is ignored.',
        body: createWebhookBody,
        response: { 201: webhookSchema, 403: errorResponse('The account already has its quota of webhooks (QUOTA_WEBHOOKS, default 100). Nothing is written.') },
      },
    },
    async (request, reply) => reply.code(201).send(await webhooks.create(callerOf(request), request.body)),
  );

  app.get(
    '/api/webhooks/:id',
    { config: { access: 'read' }, schema: { tags, summary: 'Get a webhook', description: 'One webhook; its secret is masked.', params: idParams, response: { 200: webhookSchema } } },
    async (request) => webhooks.get(callerOf(request), request.params.id),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/webhooks/:id',
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Update a webhook',
        description:
          'Partial update (PUT and PATCH alike): any subset of the writable fields; the resulting webhook is validated as a whole. ' +
          'Turning it outgoing needs a url in the same request; turning it incoming drops the stored target. secret: null removes ' +
          'it, the masked value keeps it. Disabling it cancels its pending deliveries.',
        params: idParams,
        body: updateWebhookBody,
        response: {
          200: webhookSchema,
          409: errorResponse('The webhook changed to a url nobody checked while this update checked its own: send it again.'),
          429: errorResponse(URL_LOOKUPS_BUSY),
        },
      },
      handler: async (request) => webhooks.update(callerOf(request), request.params.id, request.body),
    });
  }

  app.delete(
    '/api/webhooks/:id',
    {
      config: { access: 'delete' },
      schema: { tags, summary: 'Delete a webhook', description: 'Deletes the webhook with its deliveries (204).', params: idParams, response: { 204: noContent } },
    },
    async (request, reply) => {
      await webhooks.delete(callerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
