import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errorResponse, idParams } from '../schemas/common';
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
  // value. It parses as the app does (prototype keys kept for the body guard to name; app.ts), so
  // malformed JSON is the usual 400.
  const rawBodies = new WeakMap<FastifyRequest, string>();
  const parseJson = app.getDefaultJsonParser('ignore', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    rawBodies.set(request, body as string);
    parseJson(request, body as string, done);
  });

  const tags = ['hooks'];
  const publicRoute = { config: { public: true } } as const;
  const limited = errorResponse('More than HOOK_RATE_LIMIT requests this second to this hook; see Retry-After.');

  app.post(
    '/api/hooks/webhooks/:id',
    {
      ...publicRoute,
      schema: {
        tags,
        summary: 'Call an incoming webhook',
        description:
          'Receives a call to an incoming webhook (no credential). When the webhook has a secret the request must be signed ' +
          '(Standard Webhooks: webhook-id, webhook-timestamp within 5 minutes, webhook-signature over the raw body); 401 otherwise. ' +
          'The call is counted and emitted as each of the webhook\'s event types with data { webhookId, payload }. A signed ' +
          'webhook-id received before answers 202 with the same ids and is not counted or emitted again. 404 when the webhook ' +
          'is unknown, outgoing or disabled. 429 (with Retry-After) beyond HOOK_RATE_LIMIT requests per second to this webhook.',
        params: idParams,
        headers: signatureHeaders,
        body: hookPayload,
        response: {
          202: webhookHookAccepted,
          401: errorResponse('The webhook has a secret and the signature is missing or wrong, or its timestamp is more than 5 minutes off.'),
          404: errorResponse('No enabled incoming webhook with this id.'),
          429: limited,
        },
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
        summary: 'Fire a webhook trigger',
        description:
          'Fires a webhook trigger (no credential): X-Trigger-Token must equal its configJson.secretToken (401 otherwise). ' +
          'The JSON body, if any, is the fire\'s payload (the linked agent run\'s input.payload). 404 when no enabled webhook ' +
          'trigger has this path. 429 (with Retry-After) beyond HOOK_RATE_LIMIT requests per second to this trigger, or ' +
          'beyond FIRES_PER_MINUTE fires of its account.',
        params: triggerHookParams,
        headers: triggerTokenHeaders,
        body: hookPayload,
        response: {
          202: fireAccepted,
          401: errorResponse('X-Trigger-Token is missing or wrong.'),
          404: errorResponse('No enabled webhook trigger has this path.'),
          429: limited,
        },
      },
    },
    async (request, reply) => {
      const token = request.headers['x-trigger-token'];
      return reply.code(202).send(await hooks.fireTriggerHook(request.params.webhookPath, typeof token === 'string' ? token : undefined, request.body));
    },
  );
}
