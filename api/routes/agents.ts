import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { agentSchema, createAgentBody, graphSchema, updateAgentBody } from '../schemas/agents';
import { authErrors, errorSchema, idParams, listQuery, noContent } from '../schemas/common';
import type { AgentService } from '../services/agent-service';
import { callerOf, type App } from '../types';

export function agentRoutes(app: App, deps: { agents: AgentService; publicBaseUrl: string }): void {
  const { agents } = deps;
  const tags = ['agents'];
  const itemErrors = { 404: errorSchema, ...authErrors };

  app.get(
    '/api/agents',
    { schema: { tags, querystring: listQuery, response: { 200: z.array(agentSchema), 400: errorSchema, ...authErrors } } },
    async (request, reply) => sendPage(request, reply, await agents.list(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/agents',
    {
      schema: {
        tags,
        description: 'Creates an agent. A non-template agent costs AGENT_CREATE_COST (100) units; 402 when the balance is short.',
        body: createAgentBody,
        response: { 201: agentSchema, 400: errorSchema, 402: errorSchema, 409: errorSchema, 422: errorSchema, ...authErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await agents.create(callerOf(request), request.body)),
  );

  app.get('/api/agents/:id', { schema: { tags, params: idParams, response: { 200: agentSchema, ...itemErrors } } }, async (request) =>
    agents.get(callerOf(request), request.params.id),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/agents/:id',
      schema: {
        tags,
        description: 'Partial update: any subset of the writable fields. Leaving status template is charged like a creation.',
        params: idParams,
        body: updateAgentBody,
        response: { 200: agentSchema, 400: errorSchema, 402: errorSchema, ...itemErrors },
      },
      handler: async (request) => agents.update(callerOf(request), request.params.id, request.body),
    });
  }

  app.delete('/api/agents/:id', { schema: { tags, params: idParams, response: { 204: noContent, ...itemErrors } } }, async (request, reply) => {
    await agents.delete(callerOf(request), request.params.id);
    return reply.code(204).send();
  });

  app.get('/api/agents/:id/graph', { schema: { tags, params: idParams, response: { 200: graphSchema, ...itemErrors } } }, async (request) =>
    agents.getGraph(callerOf(request), request.params.id),
  );

  app.put(
    '/api/agents/:id/graph',
    { schema: { tags, params: idParams, body: graphSchema, response: { 200: graphSchema, 400: errorSchema, ...itemErrors } } },
    async (request) => agents.setGraph(callerOf(request), request.params.id, request.body),
  );
}
