import type { Page, PageRequest } from '../../db/paging';
import type { AgentsRepository } from '../../db/repositories/agents';
import type { ConnectorsRepository } from '../../db/repositories/connectors';
import type { ToolsRepository } from '../../db/repositories/tools';
import type { TriggersRepository } from '../../db/repositories/triggers';
import { valueAtSecretPath, type Config, type SecretPath } from '../../lib/secret-config';
import { withCheckedTargets } from '../../lib/network';
import { CONNECTOR_SECRET_PATHS, toolSecretPaths, TRIGGER_SECRET_PATHS } from '../../lib/secret-paths';
import { secretQueryNames, withoutUrlSecrets } from '../../lib/url-secrets';
import { NotFoundError, ValidationError } from '../errors';
import { toAgent } from '../mappers';
import type { AgentExport, ImportAgentInput } from '../schemas/agent-transfer';
import type { Caller } from './access';
import type { AgentService } from './agent-service';
import type { AuditTrail } from './audit-trail';
import type { ConnectorService } from './connector-service';
import { refuseWhenFull } from './quotas';
import type { TargetChecks } from './target-checks';
import { TARGET_FIELD, type ToolService } from './tool-service';
import type { TriggerService } from './trigger-service';

/** Every row of a paged list, oldest first (the order an import recreates them in). */
async function everyRow<T>(list: (page: PageRequest) => Promise<Page<T>>): Promise<T[]> {
  const rows: T[] = [];
  let page: PageRequest = { limit: 200 };
  for (;;) {
    const { items, next } = await list(page);
    rows.push(...items);
    if (!next) return rows.reverse();
    page = { limit: 200, after: next };
  }
}

/** A copy of the config without the values at `paths`: a secret is left out, not masked. */
function withoutSecrets(config: Config, paths: readonly SecretPath[]): Config {
  const out = structuredClone(config);
  for (const path of paths) {
    const parent = valueAtSecretPath(out, path.slice(0, -1));
    if (parent && typeof parent === 'object') delete (parent as Config)[path[path.length - 1]!];
  }
  return out;
}

/** `headers.Authorization` → ['headers', 'Authorization']: a header name may itself hold dots, so only the first one splits. */
function secretPath(name: string): SecretPath {
  const dot = name.indexOf('.');
  return dot === -1 ? [name] : [name.slice(0, dot), name.slice(dot + 1)];
}

/** Where the secrets were, sorted: a config's keys come back from the database in its own order. */
const secretNames = (paths: readonly SecretPath[]) => paths.map((p) => p.join('.')).sort();

/**
 * A tool's URL (a custom tool's endpoint, an MCP tool's url: `key`) with its secret query values left out
 * (`?api_key=`), and their names (`endpoint?api_key`, `url?api_key`).
 */
function urlWithoutSecrets(config: Config, key: string | undefined): { config: Config; names: string[] } {
  const url = key === undefined ? undefined : config[key];
  if (key === undefined || typeof url !== 'string') return { config, names: [] };
  return { config: { ...config, [key]: withoutUrlSecrets(url) }, names: secretQueryNames(url).map((n) => `${key}?${n}`) };
}

/** `headers.Authorization` is filled when it holds a string; `endpoint?api_key` when the endpoint's api_key has a value (`url?…` alike). */
const isFilled = (config: Config | undefined, name: string) => {
  const query = /^(endpoint|url)\?(.*)$/s.exec(name);
  if (query) {
    const url = config?.[query[1]!];
    return typeof url === 'string' && secretQueryNames(url).includes(query[2]!);
  }
  const value = config && valueAtSecretPath(config, secretPath(name));
  return typeof value === 'string' && value.length > 0;
};

/**
 * Export and import of an agent with its tools, connectors and agent triggers (docs/api.md § Agents, *Export and import*).
 * The export leaves every secret out and lists where each was; the import creates the agent and its
 * children in one transaction, charged and evented like a create, validated like each child's create.
 */
export function createAgentTransferService(deps: {
  agentsRepository: AgentsRepository;
  toolsRepository: ToolsRepository;
  connectorsRepository: ConnectorsRepository;
  triggersRepository: TriggersRepository;
  agents: AgentService;
  tools: ToolService;
  connectors: ConnectorService;
  triggers: TriggerService;
  audit: AuditTrail;
  targetChecks: TargetChecks;
  /** QUOTA_TOOLS_PER_AGENT and QUOTA_CONNECTORS_PER_AGENT: an import brings at most these (its agent is new). */
  toolsPerAgent: number;
  connectorsPerAgent: number;
}) {
  /**
   * What an import must pass before anything waits on DNS, cheapest first: the quotas its new agent's
   * children must fit (a 1,000-tool document answers 403 at once), the secrets it must fill in, then
   * every custom tool's endpoint and MCP tool's url in one bounded check (each host looked up once). A route runs it as its
   * preflight, before an Idempotency-Key's transaction takes a connection; the import runs it again and
   * finds the endpoints already checked.
   */
  async function checkImport(caller: Caller, doc: ImportAgentInput): Promise<void> {
    await refuseWhenFull({ limit: deps.toolsPerAgent, plural: 'tools' }, 'agent', async () => 0, doc.tools.length);
    await refuseWhenFull({ limit: deps.connectorsPerAgent, plural: 'connectors' }, 'agent', async () => 0, doc.connectors.length);

    // Every secret the document says is needed (and every one a connector's type requires), named at once.
    const missing: string[] = [];
    for (const [kind, items] of [['tools', doc.tools], ['connectors', doc.connectors], ['triggers', doc.triggers]] as const) {
      items.forEach((item, i) => {
        const required = new Set(item.secrets ?? []);
        if (kind === 'connectors') for (const path of CONNECTOR_SECRET_PATHS[item.type as keyof typeof CONNECTOR_SECRET_PATHS]) required.add(path.join('.'));
        for (const name of required) if (!isFilled(item.configJson, name)) missing.push(`body.${kind}.${i}.configJson.${name}`);
      });
    }
    if (missing.length) {
      throw new ValidationError(`${missing.join(', ')}: ${missing.length === 1 ? 'is a secret' : 'are secrets'} the export left out; fill in each in full`);
    }

    const endpoints = doc.tools.flatMap((t, i) => {
      const key = TARGET_FIELD[t.type];
      const url = key === undefined ? undefined : t.configJson[key];
      return typeof url === 'string' ? [{ url, field: `body.tools.${i}.configJson.${key}` }] : [];
    });
    await deps.targetChecks(caller.accountId, endpoints);
  }

  return {
    checkImport,

    async export(caller: Caller, id: string): Promise<AgentExport> {
      const row = await deps.agentsRepository.findById(caller.accountId, id);
      if (!row) throw new NotFoundError('Agent');
      const { id: _id, accountId: _account, createdAt: _created, updatedAt: _updated, ...agent } = toAgent(row);
      const [tools, connectors, triggers] = await Promise.all([
        everyRow((page) => deps.toolsRepository.listByAgent(caller.accountId, id, page)),
        everyRow((page) => deps.connectorsRepository.listByAgent(caller.accountId, id, page)),
        everyRow((page) => deps.triggersRepository.listForAgent(caller.accountId, id, page)),
      ]);
      return {
        version: 1,
        agent,
        tools: tools.map((t) => {
          const paths = toolSecretPaths(t.type, t.config_json);
          const endpoint = urlWithoutSecrets(t.config_json, TARGET_FIELD[t.type]);
          return {
            type: t.type, name: t.name, description: t.description, enabled: t.enabled, requiresApproval: t.requires_approval,
            configJson: withoutSecrets(endpoint.config, paths), secrets: [...secretNames(paths), ...endpoint.names.sort()],
          };
        }),
        connectors: connectors.map((c) => {
          const paths = CONNECTOR_SECRET_PATHS[c.type];
          return { type: c.type, name: c.name, enabled: c.enabled, configJson: withoutSecrets(c.config_json, paths), secrets: secretNames(paths) };
        }),
        // The webhook path is unique across accounts and the token a secret: an import generates both anew.
        triggers: triggers.map((t) => ({
          type: t.type, name: t.name, enabled: t.enabled, configJson: withoutSecrets(t.config_json, [...TRIGGER_SECRET_PATHS[t.type], ['webhookPath']]),
        })),
      };
    },

    /** Checked (checkImport), validated and sealed before the transaction: a custom tool's endpoint check may wait on DNS. */
    import: (caller: Caller, doc: ImportAgentInput) => withCheckedTargets(async () => {
      await checkImport(caller, doc);

      const tools = await Promise.all(
        doc.tools.map((t, i) =>
          deps.tools.prepare(
            caller,
            { type: t.type, name: t.name, description: t.description ?? '', configJson: t.configJson, enabled: t.enabled ?? true, requiresApproval: t.requiresApproval ?? false },
            `body.tools.${i}.configJson`,
          ),
        ),
      );
      const connectors = await Promise.all(
        doc.connectors.map((c, i) =>
          deps.connectors.prepare(caller, { type: c.type, name: c.name, configJson: c.configJson, enabled: c.enabled ?? true }, `body.connectors.${i}.configJson`),
        ),
      );
      const triggers = doc.triggers.map((t, i) =>
        deps.triggers.prepare({ type: t.type, name: t.name, configJson: t.configJson, enabled: t.enabled }, `body.triggers.${i}.configJson`),
      );

      return deps.agents.createWith(caller, doc.agent, async (tx, agent) => {
        const created = {
          agent: toAgent(agent),
          tools: [] as Awaited<ReturnType<ToolService['insertPrepared']>>['item'][],
          connectors: [] as Awaited<ReturnType<ConnectorService['insertPrepared']>>['item'][],
          triggers: [] as Awaited<ReturnType<TriggerService['insertPreparedForAgent']>>['item'][],
        };
        for (const prepared of tools) created.tools.push((await deps.tools.insertPrepared(tx, caller, agent.id, prepared)).item);
        for (const prepared of connectors) created.connectors.push((await deps.connectors.insertPrepared(tx, caller, agent.id, prepared)).item);
        for (const prepared of triggers) created.triggers.push((await deps.triggers.insertPreparedForAgent(tx, caller, agent.id, prepared)).item);
        await deps.audit.record(tx, caller, 'agent.import', agent.id);
        return created;
      });
    }),
  };
}
export type AgentTransferService = ReturnType<typeof createAgentTransferService>;
