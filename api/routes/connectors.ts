import { connectorSchema, createConnectorBody, updateConnectorBody } from '../schemas/connectors';
import type { ConnectorService } from '../services/connector-service';
import type { App } from '../types';
import { agentChildRoutes } from './agent-children';

export function connectorRoutes(app: App, deps: { connectors: ConnectorService; publicBaseUrl: string }): void {
  agentChildRoutes(app, {
    collection: 'connectors',
    schemas: { item: connectorSchema, create: createConnectorBody, update: updateConnectorBody },
    service: deps.connectors,
    publicBaseUrl: deps.publicBaseUrl,
    createDescription:
      'Creates a connector. Its secrets are shown in full in this response only. ' +
      '403 when the agent already has its quota of connectors (QUOTA_CONNECTORS_PER_AGENT, default 20).',
  });
}
