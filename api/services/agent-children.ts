import type { z } from 'zod';
import type { Page, PageRequest } from '../../db/paging';
import { withTransaction, type Db, type Queryable } from '../../db/pool';
import type { AgentsRepository } from '../../db/repositories/agents';
import type { QuotasRepository } from '../../db/repositories/quotas';
import { openConfig, presentConfig, sealConfig, type Config, type SecretPath } from '../../lib/secret-config';
import type { SecretBox } from '../../lib/secrets';
import { NotFoundError, ValidationError } from '../errors';
import { parseWith, patchTypedConfig } from '../validation';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { restoreMasked } from './masked-secrets';
import { withinAgentQuota, type Quota } from './quotas';

/**
 * What connectors and tools share: a child of an agent with a `type` and a configJson whose shape
 * depends on the type and which may hold secrets (sealed at rest, masked in reads: docs/api.md § Secrets).
 */

const CONFIG_FIELD = 'body.configJson';

export interface TypedConfigRules<T extends string> {
  /** Validates a whole config of each type (and fills its defaults). */
  schemas: Record<T, z.ZodType<Config> & Pick<z.ZodObject, 'shape'>>;
  /** Where the secrets of a config are. Computed from a config whose keys are plain (stored or not). */
  secretPaths(type: T, config: Config): SecretPath[];
  /**
   * Checks that need I/O (e.g. the SSRF guard); `current` is the stored config on an update. Throws
   * ValidationError, its message naming the config as `field` does (body.configJson, body.tools.0.configJson).
   */
  check?(type: T, config: Config, current: { type: T; config: Config } | null, field: string): Promise<void>;
  /**
   * Why the stored secrets may not stay with the updated config (e.g. "the endpoint's origin changed"),
   * or null when they may. When not, every secret of the config must be sent again in full.
   */
  secretsStayBlocked?(type: T, next: Config, current: { type: T; config: Config }): string | null;
}

interface ChildRow<T extends string> {
  id: string;
  type: T;
  config_json: Config;
}

interface ChildValues<T extends string> {
  type: T;
  configJson: Config;
}

export interface ChildRepository<Row, Values> {
  insert(accountId: string, agentId: string, v: Values, q?: Queryable): Promise<Row | null>;
  findById(accountId: string, id: string, q?: Queryable): Promise<Row | null>;
  findByIdForUpdate(accountId: string, id: string, q: Queryable): Promise<Row | null>;
  listByAgent(accountId: string, agentId: string, page: PageRequest, q?: Queryable): Promise<Page<Row>>;
  update(accountId: string, id: string, v: Values, q?: Queryable): Promise<Row | null>;
  delete(accountId: string, id: string, q?: Queryable): Promise<boolean>;
}

export function createAgentChildService<T extends string, Row extends ChildRow<T>, Values extends ChildValues<T>, Shown>(deps: {
  db: Db;
  agents: AgentsRepository;
  repository: ChildRepository<Row, Values>;
  secrets: SecretBox;
  /** 'Connector' → "Connector not found". */
  resource: string;
  audit: AuditTrail;
  /** The resource in audit actions: 'connector' → connector.create, connector.update, connector.delete. */
  auditAs: 'connector' | 'tool';
  quotas: QuotasRepository;
  /** docs/api.md § Quotas: at most `limit` children of this kind per agent ("at most 50 tools per agent"), counted by `count`. */
  quota: Quota & { count(agentId: string, q: Queryable): Promise<number> };
  rules: TypedConfigRules<T>;
  valuesOf(row: Row): Values;
  /** Row → API shape, given the config to show (secrets already masked or revealed). */
  present(row: Row, configJson: Config): Shown;
}) {
  const { db, agents, repository, secrets, rules } = deps;

  async function requireAgent(caller: Caller, agentId: string): Promise<void> {
    if (!(await agents.findById(caller.accountId, agentId))) throw new NotFoundError('Agent');
  }

  function opened(row: Row): Config {
    return openConfig(row.config_json, rules.secretPaths(row.type, row.config_json), secrets);
  }

  /** A stored row as every read shows it: all secrets masked. */
  function presentStored(row: Row): Shown {
    return deps.present(row, presentConfig(opened(row), rules.secretPaths(row.type, row.config_json)));
  }

  /**
   * Validates a candidate config for `type`, puts back secrets sent masked, runs the I/O checks, and
   * seals it. `current` is null on a create, so every secret given then is "set by this request".
   */
  async function resolve(type: T, candidate: Config, current: { type: T; config: Config } | null, field = CONFIG_FIELD) {
    const parsed = parseWith(rules.schemas[type], candidate, field);
    const paths = rules.secretPaths(type, parsed);
    const blocked = current && rules.secretsStayBlocked?.(type, parsed, current);
    const { config, revealed } = blocked
      ? restoreMasked(parsed, {}, paths, field, `${blocked}, and a stored secret never follows a new target: send it again in full (or null to remove it)`)
      : restoreMasked(parsed, current?.config ?? {}, paths, field);
    await rules.check?.(type, config, current, field);
    return { sealed: sealConfig(config, paths, secrets), shown: presentConfig(config, paths, revealed) };
  }

  /** A child validated and sealed, ready to insert (see prepare). */
  interface Prepared {
    values: Values;
    shown: Config;
  }

  /**
   * Validates a new child's config for its type and seals its secrets, running the checks that may wait
   * on I/O (outside any transaction); errors name the config as `field` does. Every secret given is shown
   * in full in the response that creates it.
   */
  async function prepare(values: Values, field = CONFIG_FIELD): Promise<Prepared> {
    const { sealed, shown } = await resolve(values.type, values.configJson, null, field);
    return { values: { ...values, configJson: sealed }, shown };
  }

  /** Inserts a prepared child within the agent's quota, in the caller's transaction; 404 when the agent is not (or no longer) there. */
  async function insertPrepared(tx: Queryable, caller: Caller, agentId: string, prepared: Prepared): Promise<{ id: string; item: Shown }> {
    await withinAgentQuota(deps.quotas, tx, caller.accountId, agentId, deps.quota, deps.quota.count);
    const row = await repository.insert(caller.accountId, agentId, prepared.values, tx);
    if (!row) throw new NotFoundError('Agent');
    return { id: row.id, item: deps.present(row, prepared.shown) };
  }

  return {
    async create(caller: Caller, agentId: string, values: Values): Promise<Shown> {
      await requireAgent(caller, agentId); // before the checks that may wait on DNS
      const prepared = await prepare(values);
      return withTransaction(db, async (tx) => {
        const { id, item } = await insertPrepared(tx, caller, agentId, prepared);
        await deps.audit.record(tx, caller, `${deps.auditAs}.create`, id);
        return item;
      });
    },

    prepare,
    insertPrepared,

    async list(caller: Caller, agentId: string, page: PageRequest): Promise<Page<Shown>> {
      await requireAgent(caller, agentId);
      const result = await repository.listByAgent(caller.accountId, agentId, page);
      return { ...result, items: result.items.map(presentStored) };
    },

    async get(caller: Caller, id: string): Promise<Shown> {
      const row = await repository.findById(caller.accountId, id);
      if (!row) throw new NotFoundError(deps.resource);
      return presentStored(row);
    },

    /**
     * Partial update. configJson is a merge patch onto the current config, unless the type changes:
     * then it is required and replaces the config. The result is validated as a whole.
     */
    async update(caller: Caller, id: string, patch: Partial<Values>): Promise<Shown> {
      return withTransaction(db, async (tx) => {
        const row = await repository.findByIdForUpdate(caller.accountId, id, tx);
        if (!row) throw new NotFoundError(deps.resource);
        const current = { type: row.type, config: opened(row) };
        const type = patch.type ?? row.type;
        let candidate: Config;
        if (type !== row.type) {
          if (!patch.configJson) throw new ValidationError(`${CONFIG_FIELD}: is required when type changes (it replaces the config)`);
          candidate = patchTypedConfig(null, patch.configJson, rules.schemas[type], CONFIG_FIELD);
        } else {
          // Merged onto the config as a read shows it: a secret the patch leaves out stays masked, so it is
          // restored (or refused) exactly like a mask sent back.
          const shown = presentConfig(current.config, rules.secretPaths(row.type, row.config_json));
          candidate = patch.configJson ? patchTypedConfig(shown, patch.configJson, rules.schemas[type], CONFIG_FIELD) : shown;
        }
        // A new type starts from nothing: a mask can't stand for the old type's secret (a Discord token is no Telegram token).
        const { sealed, shown } = await resolve(type, candidate, type === row.type ? current : null);
        const next: Values = { ...deps.valuesOf(row), ...patch, type, configJson: sealed };
        const updated = (await repository.update(caller.accountId, id, next, tx))!;
        await deps.audit.record(tx, caller, `${deps.auditAs}.update`, id);
        return deps.present(updated, shown);
      });
    },

    async delete(caller: Caller, id: string): Promise<void> {
      await withTransaction(db, async (tx) => {
        if (!(await repository.delete(caller.accountId, id, tx))) throw new NotFoundError(deps.resource);
        await deps.audit.record(tx, caller, `${deps.auditAs}.delete`, id);
      });
    },
  };
}
