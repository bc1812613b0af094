import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { agentSchema, createAgentBody, graphSchema, updateAgentBody } from '../schemas/agents';
import { errorResponse, idParams, listQuery, noContent } from '../schemas/common';
import type { AgentService } from '../services/agent-service';
import { callerOf, type App } from '../types';

export function agentRoutes(app: App, deps: { agents: AgentService; publicBaseUrl: string }): void {
  const { agents } = deps;
  const tags = ['agents'];
  const short = (what: string) => errorResponse(`The balance is short of AGENT_CREATE_COST (${what}); the message says the price and the balance. Nothing is written.`);

  app.get(
    '/api/agents',
    {
      config: { access: 'read' },
      schema: { tags, summary: 'List agents', description: 'Your agents, newest first.', querystring: listQuery, response: { 200: z.array(agentSchema) } },
    },
    async (request, reply) => sendPage(request, reply, await agents.list(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/agents',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Create an agent',
        description:
          'Creates an agent; only name is required. A non-template agent costs AGENT_CREATE_COST (100) units, charged in the same ' +
          'transaction; a template (status "template") is free. Emits agent.created.',
        body: createAgentBody,
        response: { 201: agentSchema, 402: short('a non-template agent') },
      },
    },
    async (request, reply) => reply.code(201).send(await agents.create(callerOf(request), request.body)),
  );

  app.get(
    '/api/agents/:id',
    { config: { access: 'read' }, schema: { tags, summary: 'Get an agent', description: 'One of your agents, its graph included.', params: idParams, response: { 200: agentSchema } } },
    async (request) => agents.get(callerOf(request), request.params.id),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/agents/:id',
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Update an agent',
        description:
          'Partial update (PUT and PATCH alike): any subset of the writable fields; memoryConfig is merged key by key. Moving the ' +
          'agent out of status template is charged like a creation. Emits agent.updated.',
        params: idParams,
        body: updateAgentBody,
        response: { 200: agentSchema, 402: short('leaving template is charged like a creation') },
      },
      handler: async (request) => agents.update(callerOf(request), request.params.id, request.body),
    });
  }

  app.delete(
    '/api/agents/:id',
    {
      config: { access: 'delete' },
      schema: {
        tags,
        summary: 'Delete an agent',
        description: 'Deletes the agent with its connectors, tools, agent triggers and runs; user triggers linked to it are unlinked. Emits agent.deleted.',
        params: idParams,
        response: { 204: noContent },
      },
    },
    async (request, reply) => {
      await agents.delete(callerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/agents/:id/graph',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get an agent\'s graph',
        description: 'The agent\'s graph: { nodes: [{ id, type, data? }], edges: [{ id?, source, target }] }.',
        params: idParams,
        response: { 200: graphSchema },
      },
    },
    async (request) => agents.getGraph(callerOf(request), request.params.id),
  );

  app.put(
    '/api/agents/:id/graph',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Replace an agent\'s graph',
        description: 'Replaces the whole graph. Emits agent.updated.',
        params: idParams,
        body: graphSchema,
        response: { 200: graphSchema, 400: errorResponse('An edge names a node that is not in nodes, or two nodes have the same id.') },
      },
    },
    async (request) => agents.setGraph(callerOf(request), request.params.id, request.body),
  );
}
