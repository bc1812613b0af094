import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errorSchema, idParams } from '../schemas/common';
import { hookPayload, signatureHeaders, triggerHookParams, triggerTokenHeaders, webhookHookAccepted } from '../schemas/hooks';
import { fireAccepted } from '../schemas/fires';
import type { HookService } from '../services/hook-service';

/**
 * Public hook endpoints (no credential; each checks its own secret), in their own encapsulated plugin
 * so the raw-body JSON parser below applies to them only.
 */
export async function hookRoutes(instance: FastifyInstance, deps: { hooks: HookService }): Promise<void> {
  const { hooks } = deps;
  const app = instance.withTypeProvider<ZodTypeProvider>();

  // A signature covers the bytes sent, not a re-serialization: keep the body text beside the parsed
  // value. Parsing (and its errors) stays the app's default, so malformed JSON is the usual 400.
  const rawBodies = new WeakMap<FastifyRequest, string>();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    rawBodies.set(request, body as string);
    parseJson(request, body as string, done);
  });

  const tags = ['hooks'];
  const publicRoute = { config: { public: true } } as const;

  app.post(
    '/api/hooks/webhooks/:id',
    {
      ...publicRoute,
      schema: {
        tags,
        security: [],
        description:
          'Receives a call to an incoming webhook (no credential). When the webhook has a secret the request must be signed ' +
          '(Standard Webhooks: webhook-id, webhook-timestamp within 5 minutes, webhook-signature over the raw body); 401 otherwise. ' +
          'The call is counted and emitted as each of the webhook\'s event types with data { webhookId, payload }. A signed ' +
          'webhook-id received before answers 202 with the same ids and is not counted or emitted again. 404 when the webhook ' +
          'is unknown, outgoing or disabled. 429 (with Retry-After) beyond HOOK_RATE_LIMIT requests per second to this webhook.',
        params: idParams,
        headers: signatureHeaders,
        body: hookPayload,
        response: { 202: webhookHookAccepted, 400: errorSchema, 401: errorSchema, 404: errorSchema, 429: errorSchema },
      },
    },
    async (request, reply) => {
      const h = request.headers;
      const pick = (name: 'webhook-id' | 'webhook-timestamp' | 'webhook-signature') => (typeof h[name] === 'string' ? h[name] : undefined);
      const accepted = await hooks.receiveWebhook(request.params.id, {
        rawBody: rawBodies.get(request) ?? '',
        payload: request.body ?? null,
        headers: { 'webhook-id': pick('webhook-id'), 'webhook-timestamp': pick('webhook-timestamp'), 'webhook-signature': pick('webhook-signature') },
      });
      return reply.code(202).send(accepted);
    },
  );

  app.post(
    '/api/hooks/triggers/:webhookPath',
    {
      ...publicRoute,
      schema: {
        tags,
        security: [],
        description:
          'Fires a webhook trigger (no credential): X-Trigger-Token must equal its configJson.secretToken (401 otherwise). ' +
          'The JSON body, if any, is the fire\'s payload (the linked agent run\'s input.payload). 404 when no enabled webhook ' +
          'trigger has this path. 429 (with Retry-After) beyond HOOK_RATE_LIMIT requests per second to this trigger, or ' +
          'beyond FIRES_PER_MINUTE fires of its account.',
        params: triggerHookParams,
        headers: triggerTokenHeaders,
        body: hookPayload,
        response: { 202: fireAccepted, 400: errorSchema, 401: errorSchema, 404: errorSchema, 429: errorSchema },
      },
    },
    async (request, reply) => {
      const token = request.headers['x-trigger-token'];
      return reply.code(202).send(await hooks.fireTriggerHook(request.params.webhookPath, typeof token === 'string' ? token : undefined, request.body));
    },
  );
}
