import type { Db } from '../../db/pool';
import type { AgentsRepository } from '../../db/repositories/agents';
import type { QuotasRepository } from '../../db/repositories/quotas';
import type { ConnectorRow, ConnectorsRepository, ConnectorValues } from '../../db/repositories/connectors';
import type { SecretBox } from '../../lib/secrets';
import { toConnector } from '../mappers';
import { CONNECTOR_SECRET_PATHS } from '../../lib/secret-paths';
import { connectorConfigSchemas, type CreateConnectorInput } from '../schemas/connectors';
import { createAgentChildService } from './agent-children';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';

export function createConnectorService(deps: {
  db: Db;
  agents: AgentsRepository;
  connectors: ConnectorsRepository;
  secrets: SecretBox;
  quotas: QuotasRepository;
  audit: AuditTrail;
  /** QUOTA_CONNECTORS_PER_AGENT */
  quota: number;
}) {
  const children = createAgentChildService({
    db: deps.db,
    agents: deps.agents,
    repository: deps.connectors,
    secrets: deps.secrets,
    resource: 'Connector',
    audit: deps.audit,
    auditAs: 'connector',
    quotas: deps.quotas,
    quota: { limit: deps.quota, plural: 'connectors', count: deps.quotas.countConnectors },
    rules: { schemas: connectorConfigSchemas, secretPaths: (type) => [...CONNECTOR_SECRET_PATHS[type]] },
    valuesOf: (row: ConnectorRow): ConnectorValues => ({ type: row.type, name: row.name, configJson: row.config_json, enabled: row.enabled }),
    present: toConnector,
  });
  // A connector's config waits on no network check, so its create needs no preflight (checkCreate).
  const { checkCreate: _noPreflight, ...rest } = children;
  return {
    ...rest,
    create: (caller: Caller, agentId: string, input: CreateConnectorInput) =>
      children.create(caller, agentId, { type: input.type, name: input.name, configJson: input.configJson, enabled: input.enabled ?? true }),
  };
}
export type ConnectorService = ReturnType<typeof createConnectorService>;
