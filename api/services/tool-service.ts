import type { Db } from '../../db/pool';
import type { AgentsRepository } from '../../db/repositories/agents';
import type { QuotasRepository } from '../../db/repositories/quotas';
import type { ToolRow, ToolsRepository, ToolType, ToolValues } from '../../db/repositories/tools';
import type { Config } from '../../lib/secret-config';
import { toolSecretPaths } from '../../lib/secret-paths';
import type { SecretBox } from '../../lib/secrets';
import { toTool } from '../mappers';
import { toolConfigSchemas, type CreateToolInput } from '../schemas/tools';
import { createAgentChildService } from './agent-children';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import type { TargetChecks } from './target-checks';

/**
 * The SSRF guard on a custom tool's endpoint, when it is written: a rename of a tool whose endpoint
 * is unchanged does not resolve it again (the executor checks again before each request).
 */
async function checkEndpoint(
  check: TargetChecks,
  type: ToolType,
  config: Config,
  current: { type: ToolType; config: Config } | null,
  field: string,
  accountId: string,
) {
  const key = TARGET_FIELD[type];
  if (!key) return;
  const target = config[key] as string;
  if (current?.type === type && current.config[key] === target) return;
  await check(accountId, [{ url: target, field: `${field}.${key}` }]);
}

/** The config field holding the URL a tool calls: a custom tool's endpoint, an MCP tool's server. */
export const TARGET_FIELD: Partial<Record<ToolType, string>> = { custom: 'endpoint', mcp: 'url' };

/**
 * docs/api.md § Secrets: a custom tool's secret headers were given for its endpoint, all of it (scheme,
 * host, port, path, query and fragment): another path on the same host is another target. So were an MCP
 * tool's for its url.
 */
function secretsStayBlocked(type: ToolType, next: Config, current: { type: ToolType; config: Config }): string | null {
  const key = TARGET_FIELD[type];
  if (!key || current.type !== type) return null;
  return sameTarget(next[key], current.config[key]) ? null : `the ${key} changed`;
}

/** The same URL, spelled alike or not (`https://h:443/x` is `https://h/x`); both were validated as URLs. */
const sameTarget = (a: unknown, b: unknown) => a === b || new URL(String(a)).href === new URL(String(b)).href;

/** A custom tool's endpoint and an MCP tool's url may carry secret query values (`?api_key=…`). */
const toolSecretUrls = (type: ToolType) => {
  const key = TARGET_FIELD[type];
  return key ? [[key]] : [];
};

export function createToolService(deps: {
  db: Db;
  agents: AgentsRepository;
  tools: ToolsRepository;
  secrets: SecretBox;
  targetChecks: TargetChecks;
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
      secretUrls: toolSecretUrls,
      check: (type, config, current, field, accountId) => checkEndpoint(deps.targetChecks, type, config, current, field, accountId),
      secretsStayBlocked,
    },
    valuesOf: (row: ToolRow): ToolValues => ({
      type: row.type, name: row.name, description: row.description, configJson: row.config_json, enabled: row.enabled, requiresApproval: row.requires_approval,
    }),
    present: toTool,
  });
  const valuesOf = (input: CreateToolInput): ToolValues => ({
    type: input.type, name: input.name, description: input.description ?? '', configJson: input.configJson, enabled: input.enabled ?? true,
    requiresApproval: input.requiresApproval ?? false,
  });
  return {
    ...children,
    /** The create's checks alone (the route's preflight): agent, quota, config, endpoint. */
    checkCreate: async (caller: Caller, agentId: string, input: CreateToolInput): Promise<void> => {
      await children.checkCreate(caller, agentId, valuesOf(input));
    },
    create: (caller: Caller, agentId: string, input: CreateToolInput) => children.create(caller, agentId, valuesOf(input)),
  };
}
export type ToolService = ReturnType<typeof createToolService>;
