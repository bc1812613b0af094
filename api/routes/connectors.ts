import { createQuotasRepository } from '../../db/repositories/quotas';
import { createConnectorsRepository } from '../../db/repositories/connectors';
import type { ResourceContext } from '../context';
import { connectorSchema, createConnectorBody, updateConnectorBody } from '../schemas/connectors';
import { createConnectorService } from '../services/connector-service';
import type { App } from '../types';
import { agentChildRoutes } from './agent-children';

export function connectorRoutes(app: App, ctx: ResourceContext): void {
  agentChildRoutes(app, {
    collection: 'connectors',
    schemas: { item: connectorSchema, create: createConnectorBody, update: updateConnectorBody },
    service: createConnectorService({
      db: ctx.db,
      agents: ctx.agents,
      connectors: createConnectorsRepository(ctx.db),
      secrets: ctx.secrets,
      quotas: createQuotasRepository(ctx.db),
      quota: ctx.config.quotas.connectorsPerAgent,
    }),
    publicBaseUrl: ctx.publicBaseUrl,
    createDescription:
      'Creates a connector. Its secrets are shown in full in this response only. ' +
      '403 when the agent already has its quota of connectors (QUOTA_CONNECTORS_PER_AGENT, default 20).',
  });
}
