import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { agentIdParams, errorResponse, idParams, listQuery, noContent } from '../schemas/common';
import { createTriggerBody, createUserTriggerBody, updateTriggerBody, updateUserTriggerBody } from '../schemas/trigger-bodies';
import { triggerSchema } from '../schemas/triggers';
import type { TriggerService } from '../services/trigger-service';
import { callerOf, type App } from '../types';

const quotaFull = errorResponse('The account already has its quota of triggers, agent and user triggers together (QUOTA_TRIGGERS, default 500). Nothing is written.');
const pathTaken = errorResponse('configJson.webhookPath is already in use (by any account).');
const CONFIG =
  'configJson depends on type (see the examples): schedule/cron { cronExpression, timezone, overlapPolicy, catchupWindow }, ' +
  'webhook { webhookPath?, secretToken? } (generated when absent, the token shown in this response only), event ' +
  '{ eventType, eventFilter }, agent_finished/agent_output { eventType = agent.completed, eventFilter }.';
const UPDATE =
  'Partial update (PUT and PATCH alike): any subset of the writable fields. configJson is a JSON merge patch (RFC 7386) onto ' +
  'the current config (null removes a field; webhookPath or secretToken null generates a new one), unless type changes: then ' +
  'it is required and replaces the config. The result is validated as a whole, per type.';

/**
 * Agent triggers (`/api/agents/:agentId/triggers`, `/api/triggers/:id`) and standalone user triggers
 * (`/api/user-triggers`, `/api/user-triggers/:id`): one table, two APIs (docs/api.md § Triggers).
 */
export function triggerRoutes(app: App, deps: { triggers: TriggerService; publicBaseUrl: string }): void {
  const { triggers } = deps;

  // ---- agent triggers ----
  const tags = ['triggers'];
  const agentMissing = errorResponse('No agent with this id in your account.');

  app.get(
    '/api/agents/:agentId/triggers',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List an agent\'s triggers',
        description: 'The triggers of an agent, newest first, with their fire count and next scheduled fire. Secrets are masked.',
        params: agentIdParams,
        querystring: listQuery,
        response: { 200: z.array(triggerSchema), 404: agentMissing },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await triggers.listForAgent(callerOf(request), request.params.agentId, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/agents/:agentId/triggers',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Create an agent trigger',
        description: `Creates a trigger of the agent; each fire starts a run of it. ${CONFIG}`,
        params: agentIdParams,
        body: createTriggerBody,
        response: { 201: triggerSchema, 403: quotaFull, 404: agentMissing, 409: pathTaken },
      },
    },
    async (request, reply) => reply.code(201).send(await triggers.createForAgent(callerOf(request), request.params.agentId, request.body)),
  );

  // ---- standalone user triggers ----
  const userTags = ['user-triggers'];

  app.get(
    '/api/user-triggers',
    {
      config: { access: 'read' },
      schema: {
        tags: userTags,
        summary: 'List user triggers',
        description: 'The standalone triggers of your account, newest first. Secrets are masked.',
        querystring: listQuery,
        response: { 200: z.array(triggerSchema) },
      },
    },
    async (request, reply) => sendPage(request, reply, await triggers.listUserTriggers(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/user-triggers',
    {
      config: { access: 'write' },
      schema: {
        tags: userTags,
        summary: 'Create a user trigger',
        description:
          'Creates a standalone trigger, optionally linked to an agent of your account (agentId), whose run each fire then starts; ' +
          `unlinked, each fire emits trigger.fired. ${CONFIG}`,
        body: createUserTriggerBody,
        response: { 201: triggerSchema, 400: errorResponse('agentId is not an agent of your account.'), 403: quotaFull, 409: pathTaken },
      },
    },
    async (request, reply) => reply.code(201).send(await triggers.createUserTrigger(callerOf(request), request.body)),
  );

  // ---- items of both kinds: each route only ever sees rows of its own scope ----
  const items = [
    { url: '/api/triggers/:id', scope: 'agent', kind: 'an agent trigger', tags, body: updateTriggerBody, extra: {} },
    {
      url: '/api/user-triggers/:id', scope: 'user', kind: 'a user trigger', tags: userTags, body: updateUserTriggerBody,
      extra: { 400: errorResponse('agentId is not an agent of your account.') },
    },
  ] as const;
  for (const { url, scope, kind, tags, body, extra } of items) {
    app.get(
      url,
      { config: { access: 'read' }, schema: { tags, summary: `Get ${kind}`, description: 'One trigger; secrets are masked.', params: idParams, response: { 200: triggerSchema } } },
      async (request) => triggers.get(callerOf(request), scope, request.params.id),
    );

    for (const method of ['PUT', 'PATCH'] as const) {
      app.route({
        method,
        url,
        config: { access: 'write' },
        schema: {
          tags,
          summary: `Update ${kind}`,
          description: UPDATE,
          params: idParams,
          body,
          response: { 200: triggerSchema, ...extra, 409: pathTaken },
        },
        handler: async (request) => triggers.update(callerOf(request), scope, request.params.id, request.body),
      });
    }

    app.delete(
      url,
      {
        config: { access: 'delete' },
        schema: {
          tags,
          summary: `Delete ${kind}`,
          description: 'Deletes the trigger with its fire history; its schedule is removed from Temporal (204).',
          params: idParams,
          response: { 204: noContent },
        },
      },
      async (request, reply) => {
        await triggers.delete(callerOf(request), scope, request.params.id);
        return reply.code(204).send();
      },
    );
  }
}
