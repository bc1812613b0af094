import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { agentIdParams, authErrors, errorSchema, idParams, listQuery, noContent } from '../schemas/common';
import {
  createTriggerBody,
  createUserTriggerBody,
  triggerSchema,
  updateTriggerBody,
  updateUserTriggerBody,
} from '../schemas/triggers';
import type { TriggerService } from '../services/trigger-service';
import { callerOf, type App } from '../types';

const QUOTA_403 = '403 when the account already has its quota of triggers, agent and user triggers together (QUOTA_TRIGGERS, default 500).';

/**
 * Agent triggers (`/api/agents/:agentId/triggers`, `/api/triggers/:id`) and standalone user triggers
 * (`/api/user-triggers`, `/api/user-triggers/:id`): one table, two APIs (DESIGN §4 Triggers).
 */
export function triggerRoutes(app: App, deps: { triggers: TriggerService; publicBaseUrl: string }): void {
  const { triggers } = deps;
  const itemErrors = { 404: errorSchema, ...authErrors };
  const writeErrors = { 400: errorSchema, 409: errorSchema };

  // ---- agent triggers ----
  const tags = ['triggers'];

  app.get(
    '/api/agents/:agentId/triggers',
    {
      schema: {
        tags,
        description: 'The triggers of an agent, newest first.',
        params: agentIdParams,
        querystring: listQuery,
        response: { 200: z.array(triggerSchema), 400: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await triggers.listForAgent(callerOf(request), request.params.agentId, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/agents/:agentId/triggers',
    {
      schema: {
        tags,
        description: `Creates a trigger of the agent. 409 when configJson.webhookPath is already in use. ${QUOTA_403}`,
        params: agentIdParams,
        body: createTriggerBody,
        response: { 201: triggerSchema, ...writeErrors, 403: errorSchema, 422: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await triggers.createForAgent(callerOf(request), request.params.agentId, request.body)),
  );

  // ---- standalone user triggers ----
  const userTags = ['user-triggers'];

  app.get(
    '/api/user-triggers',
    {
      schema: {
        tags: userTags,
        description: 'The standalone triggers of your account, newest first.',
        querystring: listQuery,
        response: { 200: z.array(triggerSchema), 400: errorSchema, ...authErrors },
      },
    },
    async (request, reply) => sendPage(request, reply, await triggers.listUserTriggers(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/user-triggers',
    {
      schema: {
        tags: userTags,
        description: `Creates a standalone trigger, optionally linked to an agent of your account (agentId; 400 otherwise). ${QUOTA_403}`,
        body: createUserTriggerBody,
        response: { 201: triggerSchema, ...writeErrors, 403: errorSchema, 422: errorSchema, ...authErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await triggers.createUserTrigger(callerOf(request), request.body)),
  );

  // ---- items of both kinds: each route only ever sees rows of its own scope ----
  const items = [
    { url: '/api/triggers/:id', scope: 'agent', tags, body: updateTriggerBody },
    { url: '/api/user-triggers/:id', scope: 'user', tags: userTags, body: updateUserTriggerBody },
  ] as const;
  for (const { url, scope, tags, body } of items) {
    app.get(url, { schema: { tags, params: idParams, response: { 200: triggerSchema, ...itemErrors } } }, async (request) =>
      triggers.get(callerOf(request), scope, request.params.id),
    );

    for (const method of ['PUT', 'PATCH'] as const) {
      app.route({
        method,
        url,
        schema: {
          tags,
          description:
            'Partial update: any subset of the writable fields. configJson is a JSON merge patch onto the current config, ' +
            'unless type changes (then it is required and replaces it). 409 when configJson.webhookPath is already in use.',
          params: idParams,
          body,
          response: { 200: triggerSchema, ...writeErrors, ...itemErrors },
        },
        handler: async (request) => triggers.update(callerOf(request), scope, request.params.id, request.body),
      });
    }

    app.delete(url, { schema: { tags, params: idParams, response: { 204: noContent, ...itemErrors } } }, async (request, reply) => {
      await triggers.delete(callerOf(request), scope, request.params.id);
      return reply.code(204).send();
    });
  }
}
