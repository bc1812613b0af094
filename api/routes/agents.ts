import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { agentExportSchema, importAgentBody, importedAgentSchema, type ImportAgentInput } from '../schemas/agent-transfer';
import { agentListQuery, agentSchema, createAgentBody, graphSchema, updateAgentBody } from '../schemas/agents';
import { errorResponse, idParams, noContent } from '../schemas/common';
import type { AgentService } from '../services/agent-service';
import type { AgentTransferService } from '../services/agent-transfer';
import { callerOf, type App } from '../types';

export function agentRoutes(app: App, deps: { agents: AgentService; transfer: AgentTransferService; publicBaseUrl: string }): void {
  const { agents, transfer } = deps;
  const tags = ['agents'];
  const short = (what: string) => errorResponse(`The balance is short of AGENT_CREATE_COST (${what}); the message says the price and the balance. Nothing is written.`);

  app.get(
    '/api/agents',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List agents',
        description: 'The agents of the account, newest first; q finds a text in their name or description, status keeps one status. The Link header\'s next page keeps both.',
        querystring: agentListQuery,
        response: { 200: z.array(agentSchema) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await agents.list(callerOf(request), pageRequest(request.query), { text: request.query.q, status: request.query.status }), deps.publicBaseUrl),
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

  app.get(
    '/api/agents/:id/export',
    {
      config: { access: 'export' },
      schema: {
        tags,
        summary: 'Export an agent',
        description:
          'The agent with its tools, connectors and agent triggers, as a document POST /api/agents/import takes (in this account or ' +
          'another): no ids, account ids or counters, and every secret left out (not masked: absent), each item listing in secrets ' +
          'where its secrets were. Webhook triggers lose their webhookPath and secretToken; an import generates new ones. Needs canExport.',
        params: idParams,
        response: { 200: agentExportSchema, 403: errorResponse('Your permissions in this account lack canExport.') },
      },
    },
    async (request) => transfer.export(callerOf(request), request.params.id),
  );

  app.post(
    '/api/agents/import',
    {
      config: { access: 'write', preflight: (request) => transfer.checkImport(callerOf(request), request.body as ImportAgentInput) },
      schema: {
        tags,
        summary: 'Import an agent',
        description:
          'Creates an agent with its tools, connectors and agent triggers from an export whose secrets are filled in, in one ' +
          'transaction: all of it or nothing. Charged like a create (AGENT_CREATE_COST unless the agent is a template), emits ' +
          'agent.created, and each child is validated and counted against its quota like its own create. Secrets set here, and ' +
          'generated webhook trigger tokens, are shown in full in this response only.',
        body: importAgentBody,
        response: {
          201: importedAgentSchema,
          400: errorResponse('Every secret the document needs and lacks is named at once (body.connectors.0.configJson.botToken, …); or a child\'s config is invalid for its type.'),
          402: short('an imported non-template agent is charged like a creation'),
          403: errorResponse('Your role here is viewer, or the children would exceed a quota (the message names it). Nothing is written.'),
          409: errorResponse('A webhook trigger names a webhookPath that is already in use.'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await transfer.import(callerOf(request), request.body)),
  );
}
