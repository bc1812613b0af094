import type { Db } from '../../db/pool';
import type { AgentsRepository } from '../../db/repositories/agents';
import type { QuotasRepository } from '../../db/repositories/quotas';
import type { ToolRow, ToolsRepository, ToolType, ToolValues } from '../../db/repositories/tools';
import { assertPublicTarget, TargetNotAllowedError } from '../../lib/network';
import type { Config } from '../../lib/secret-config';
import { toolSecretPaths } from '../../lib/secret-paths';
import type { SecretBox } from '../../lib/secrets';
import { ValidationError } from '../errors';
import { toTool } from '../mappers';
import { toolConfigSchemas, type CreateToolInput } from '../schemas/tools';
import { createAgentChildService } from './agent-children';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';

/**
 * The SSRF guard on a custom tool's endpoint, when it is written: a rename of a tool whose endpoint
 * is unchanged does not resolve it again (the executor checks again before each request).
 */
async function checkEndpoint(
  type: ToolType,
  config: Config,
  current: { type: ToolType; config: Config } | null,
  field: string,
  allowPrivate: boolean,
) {
  if (type !== 'custom') return;
  const endpoint = config.endpoint as string;
  if (current?.type === 'custom' && current.config.endpoint === endpoint) return;
  try {
    await assertPublicTarget(endpoint, allowPrivate);
  } catch (err) {
    if (err instanceof TargetNotAllowedError) throw new ValidationError(`${field}.endpoint: ${err.message}`);
    throw err;
  }
}

const originOf = (url: unknown) => new URL(String(url)).origin;

/** docs/api.md § Secrets: a custom tool's secret headers were given for its endpoint's origin (scheme, host, port) only. */
function secretsStayBlocked(type: ToolType, next: Config, current: { type: ToolType; config: Config }): string | null {
  if (type !== 'custom' || current.type !== 'custom') return null;
  return originOf(next.endpoint) === originOf(current.config.endpoint) ? null : "the endpoint's origin changed";
}

export function createToolService(deps: {
  db: Db;
  agents: AgentsRepository;
  tools: ToolsRepository;
  secrets: SecretBox;
  allowPrivateTargets: boolean;
  quotas: QuotasRepository;
  audit: AuditTrail;
  /** QUOTA_TOOLS_PER_AGENT */
  quota: number;
}) {
  const children = createAgentChildService({
    db: deps.db,
    agents: deps.agents,
    repository: deps.tools,
    secrets: deps.secrets,
    resource: 'Tool',
    audit: deps.audit,
    auditAs: 'tool',
    quotas: deps.quotas,
    quota: { limit: deps.quota, plural: 'tools', count: deps.quotas.countTools },
    rules: {
      schemas: toolConfigSchemas,
      secretPaths: toolSecretPaths,
      check: (type, config, current, field) => checkEndpoint(type, config, current, field, deps.allowPrivateTargets),
      secretsStayBlocked,
    },
    valuesOf: (row: ToolRow): ToolValues => ({
      type: row.type, name: row.name, description: row.description, configJson: row.config_json, enabled: row.enabled,
    }),
    present: toTool,
  });
  return {
    ...children,
    create: (caller: Caller, agentId: string, input: CreateToolInput) =>
      children.create(caller, agentId, {
        type: input.type, name: input.name, description: input.description ?? '', configJson: input.configJson, enabled: input.enabled ?? true,
      }),
  };
}
export type ToolService = ReturnType<typeof createToolService>;
