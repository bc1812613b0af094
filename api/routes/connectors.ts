import { z } from 'zod';
import { createConnectorsRepository } from '../../db/repositories/connectors';
import type { ResourceContext } from '../context';
import { pageRequest, sendPage } from '../pagination';
import { agentIdParams, authErrors, errorSchema, idParams, listQuery, noContent } from '../schemas/common';
import { connectorSchema, createConnectorBody, updateConnectorBody } from '../schemas/connectors';
import { createConnectorService } from '../services/connector-service';
import { callerOf, type App } from '../types';

export function connectorRoutes(app: App, ctx: ResourceContext): void {
  const connectors = createConnectorService({ db: ctx.db, agents: ctx.agents, connectors: createConnectorsRepository(ctx.db), secrets: ctx.secrets });
  const tags = ['connectors'];
  const itemErrors = { 404: errorSchema, ...authErrors };

  app.get(
    '/api/agents/:agentId/connectors',
    {
      schema: {
        tags,
        description: "The agent's connectors, newest first. Secrets are masked.",
        params: agentIdParams,
        querystring: listQuery,
        response: { 200: z.array(connectorSchema), 400: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await connectors.list(callerOf(request), request.params.agentId, pageRequest(request.query)), ctx.publicBaseUrl),
  );

  app.post(
    '/api/agents/:agentId/connectors',
    {
      schema: {
        tags,
        description: 'Creates a connector. Its secrets are shown in full in this response only.',
        params: agentIdParams,
        body: createConnectorBody,
        response: { 201: connectorSchema, 400: errorSchema, 409: errorSchema, 422: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await connectors.create(callerOf(request), request.params.agentId, request.body)),
  );

  app.get(
    '/api/connectors/:id',
    { schema: { tags, description: 'Secrets are masked.', params: idParams, response: { 200: connectorSchema, ...itemErrors } } },
    async (request) => connectors.get(callerOf(request), request.params.id),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/connectors/:id',
      schema: {
        tags,
        description:
          'Partial update: any subset of the writable fields. configJson is merged (RFC 7386) unless type changes. ' +
          'A secret sent masked stays unchanged; a secret set here is shown in full in this response only.',
        params: idParams,
        body: updateConnectorBody,
        response: { 200: connectorSchema, 400: errorSchema, ...itemErrors },
      },
      handler: async (request) => connectors.update(callerOf(request), request.params.id, request.body),
    });
  }

  app.delete('/api/connectors/:id', { schema: { tags, params: idParams, response: { 204: noContent, ...itemErrors } } }, async (request, reply) => {
    await connectors.delete(callerOf(request), request.params.id);
    return reply.code(204).send();
  });
}
