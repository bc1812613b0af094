import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { authErrors, errorSchema, idParams, listQuery, noContent } from '../schemas/common';
import { createWebhookBody, updateWebhookBody, webhookSchema } from '../schemas/webhooks';
import type { WebhookService } from '../services/webhook-service';
import { callerOf, type App } from '../types';

export function webhookRoutes(app: App, deps: { webhooks: WebhookService; publicBaseUrl: string }): void {
  const { webhooks } = deps;
  const tags = ['webhooks'];
  const itemErrors = { 404: errorSchema, ...authErrors };

  app.get(
    '/api/webhooks',
    { schema: { tags, querystring: listQuery, response: { 200: z.array(webhookSchema), 400: errorSchema, ...authErrors } } },
    async (request, reply) => sendPage(request, reply, await webhooks.list(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/webhooks',
    {
      schema: {
        tags,
        description:
          'Creates a webhook. Outgoing (default): url is the target and is refused when it points at a private, loopback or ' +
          'link-local address (unless ALLOW_PRIVATE_TARGETS). Incoming: any url sent is ignored; the response shows the URL to post to. ' +
          '403 when the account already has its quota of webhooks (QUOTA_WEBHOOKS, default 100).',
        body: createWebhookBody,
        response: { 201: webhookSchema, 400: errorSchema, 403: errorSchema, 409: errorSchema, 422: errorSchema, ...authErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await webhooks.create(callerOf(request), request.body)),
  );

  app.get('/api/webhooks/:id', { schema: { tags, params: idParams, response: { 200: webhookSchema, ...itemErrors } } }, async (request) =>
    webhooks.get(callerOf(request), request.params.id),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/webhooks/:id',
      schema: {
        tags,
        description:
          'Partial update: any subset of the writable fields; the resulting webhook is validated as a whole. Turning it outgoing ' +
          'needs a url in the same request; turning it incoming drops the stored target. secret: null removes it, the masked value keeps it.',
        params: idParams,
        body: updateWebhookBody,
        response: { 200: webhookSchema, 400: errorSchema, ...itemErrors },
      },
      handler: async (request) => webhooks.update(callerOf(request), request.params.id, request.body),
    });
  }

  app.delete('/api/webhooks/:id', { schema: { tags, params: idParams, response: { 204: noContent, ...itemErrors } } }, async (request, reply) => {
    await webhooks.delete(callerOf(request), request.params.id);
    return reply.code(204).send();
  });
}
