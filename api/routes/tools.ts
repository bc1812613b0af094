import { z } from 'zod';
import { createToolsRepository } from '../../db/repositories/tools';
import type { ResourceContext } from '../context';
import { pageRequest, sendPage } from '../pagination';
import { agentIdParams, authErrors, errorSchema, idParams, listQuery, noContent } from '../schemas/common';
import { createToolBody, toolSchema, updateToolBody } from '../schemas/tools';
import { createToolService } from '../services/tool-service';
import { callerOf, type App } from '../types';

export function toolRoutes(app: App, ctx: ResourceContext): void {
  const tools = createToolService({
    db: ctx.db,
    agents: ctx.agents,
    tools: createToolsRepository(ctx.db),
    secrets: ctx.secrets,
    allowPrivateTargets: ctx.config.webhooks.allowPrivateTargets,
  });
  const tags = ['tools'];
  const itemErrors = { 404: errorSchema, ...authErrors };

  app.get(
    '/api/agents/:agentId/tools',
    {
      schema: {
        tags,
        description: "The agent's tools, newest first. Secrets are masked.",
        params: agentIdParams,
        querystring: listQuery,
        response: { 200: z.array(toolSchema), 400: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await tools.list(callerOf(request), request.params.agentId, pageRequest(request.query)), ctx.publicBaseUrl),
  );

  app.post(
    '/api/agents/:agentId/tools',
    {
      schema: {
        tags,
        description: "Creates a tool. A custom tool's endpoint must be a public address unless ALLOW_PRIVATE_TARGETS; its secret headers are shown in full in this response only.",
        params: agentIdParams,
        body: createToolBody,
        response: { 201: toolSchema, 400: errorSchema, 409: errorSchema, 422: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await tools.create(callerOf(request), request.params.agentId, request.body)),
  );

  app.get(
    '/api/tools/:id',
    { schema: { tags, description: 'Secrets are masked.', params: idParams, response: { 200: toolSchema, ...itemErrors } } },
    async (request) => tools.get(callerOf(request), request.params.id),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/tools/:id',
      schema: {
        tags,
        description:
          'Partial update: any subset of the writable fields. configJson is merged (RFC 7386) unless type changes. ' +
          'A secret sent masked stays unchanged; a secret set here is shown in full in this response only.',
        params: idParams,
        body: updateToolBody,
        response: { 200: toolSchema, 400: errorSchema, ...itemErrors },
      },
      handler: async (request) => tools.update(callerOf(request), request.params.id, request.body),
    });
  }

  app.delete('/api/tools/:id', { schema: { tags, params: idParams, response: { 204: noContent, ...itemErrors } } }, async (request, reply) => {
    await tools.delete(callerOf(request), request.params.id);
    return reply.code(204).send();
  });
}
