import type { z } from 'zod';
import type { Page, PageRequest } from '../../db/paging';
import { withTransaction, type Db, type Queryable } from '../../db/pool';
import type { AgentsRepository } from '../../db/repositories/agents';
import type { QuotasRepository } from '../../db/repositories/quotas';
import { withCheckedTargets } from '../../lib/network';
import { mapSecrets, openConfig, pathKey, presentConfig, sealConfig, valueAtSecretPath, type Config, type SecretPath } from '../../lib/secret-config';
import type { SecretBox } from '../../lib/secrets';
import { maskUrlSecrets, originOnly, restoreUrlSecrets, URL_MASK_MISMATCH } from '../../lib/url-secrets';
import { NotFoundError, ValidationError } from '../errors';
import { parseWith, patchTypedConfig } from '../validation';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { restoreMasked } from './masked-secrets';
import { refuseWhenFull, withinAgentQuota, type Quota } from './quotas';

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
   * Where the config holds URLs whose secret query values (`?api_key=…`) are masked on read
   * (lib/url-secrets.ts), e.g. [['endpoint']].
   */
  secretUrls?(type: T, config: Config): SecretPath[];
  /**
   * Checks that need I/O (e.g. the SSRF guard), in the share of lookups of `accountId`; `current` is the
   * stored config on an update. Throws ValidationError, its message naming the config as `field` does
   * (body.configJson, body.tools.0.configJson).
   */
  check?(type: T, config: Config, current: { type: T; config: Config } | null, field: string, accountId: string): Promise<void>;
  /**
   * Why the stored secrets may not stay with the updated config (e.g. "the endpoint changed"),
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
  /** docs/api.md § Quotas and charges: at most `limit` children of this kind per agent ("at most 50 tools per agent"), counted by `count`. */
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

  const urlPaths = (type: T, config: Config) => rules.secretUrls?.(type, config) ?? [];

  /** The config to show: secrets masked, and the secret query values of its URLs, except those this request set. */
  function shownConfig(type: T, plain: Config, paths: readonly SecretPath[], revealed: ReadonlySet<string> = new Set()): Config {
    return mapSecrets(presentConfig(plain, paths, revealed), urlPaths(type, plain), (url, path) => (revealed.has(pathKey(path)) ? url : maskUrlSecrets(url)));
  }

  /** The config for a caller without canExport: its URLs as their origin followed by `/…` (docs/api.md § Secrets). */
  function forCaller(caller: Caller, type: T, config: Config): Config {
    return caller.permissions.canExport ? config : mapSecrets(config, urlPaths(type, config), (url) => originOnly(url));
  }

  /** A stored row as every read shows it: all secrets masked (and, for a caller without canExport, the paths of its URLs). */
  function presentStored(caller: Caller, row: Row): Shown {
    return deps.present(row, forCaller(caller, row.type, shownConfig(row.type, opened(row), rules.secretPaths(row.type, row.config_json))));
  }

  /**
   * URLs sent back with their secret query values masked stand for the stored ones (the same URL exactly);
   * returns the config with them restored, and the URL paths this request set or changed.
   */
  function restoreUrls(type: T, config: Config, current: Config | undefined, field: string): { config: Config; revealed: Set<string> } {
    const revealed = new Set<string>();
    const restored = mapSecrets(config, urlPaths(type, config), (url, path) => {
      const stored = current && valueAtSecretPath(current, path);
      const kept = restoreUrlSecrets(url, typeof stored === 'string' ? stored : null);
      if (kept === null) throw new ValidationError(`${field}.${path.join('.')}: ${URL_MASK_MISMATCH}`);
      if (kept !== stored) revealed.add(pathKey(path));
      return kept;
    });
    return { config: restored, revealed };
  }

  /**
   * Validates a candidate config for `type`, puts back secrets sent masked, runs the I/O checks, and
   * seals it. `current` is null on a create, so every secret given then is "set by this request".
   */
  async function resolve(type: T, candidate: Config, current: { type: T; config: Config } | null, accountId: string, field = CONFIG_FIELD) {
    const parsed = parseWith(rules.schemas[type], candidate, field);
    const paths = rules.secretPaths(type, parsed);
    const urls = restoreUrls(type, parsed, current?.config, field);
    const blocked = current && rules.secretsStayBlocked?.(type, urls.config, current);
    const { config, revealed } = blocked
      ? restoreMasked(urls.config, {}, paths, field, `${blocked}, and a stored secret never follows a new target: send it again in full (or null to remove it)`)
      : restoreMasked(urls.config, current?.config ?? {}, paths, field);
    for (const path of urls.revealed) revealed.add(path);
    await rules.check?.(type, config, current, field, accountId);
    return { sealed: sealConfig(config, paths, secrets), shown: shownConfig(type, config, paths, revealed) };
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
  async function prepare(caller: Caller, values: Values, field = CONFIG_FIELD): Promise<Prepared> {
    const { sealed, shown } = await resolve(values.type, values.configJson, null, caller.accountId, field);
    return { values: { ...values, configJson: sealed }, shown };
  }

  /** Inserts a prepared child within the agent's quota, in the caller's transaction; 404 when the agent is not (or no longer) there. */
  async function insertPrepared(tx: Queryable, caller: Caller, agentId: string, prepared: Prepared): Promise<{ id: string; item: Shown }> {
    await withinAgentQuota(deps.quotas, tx, caller.accountId, agentId, deps.quota, deps.quota.count);
    const row = await repository.insert(caller.accountId, agentId, prepared.values, tx);
    if (!row) throw new NotFoundError('Agent');
    return { id: row.id, item: deps.present(row, prepared.shown) };
  }

  /**
   * The config an update leads to, validated as a whole and sealed. configJson is a merge patch onto the
   * current config, unless the type changes: then it is required and replaces the config.
   */
  async function plan(caller: Caller, row: Row, patch: Partial<Values>) {
    const current = { type: row.type, config: opened(row) };
    const type = patch.type ?? row.type;
    let candidate: Config;
    if (type !== row.type) {
      if (!patch.configJson) throw new ValidationError(`${CONFIG_FIELD}: is required when type changes (it replaces the config)`);
      candidate = patchTypedConfig(null, patch.configJson, rules.schemas[type], CONFIG_FIELD);
    } else {
      // Merged onto the config as a read shows it: a secret the patch leaves out stays masked, so it is
      // restored (or refused) exactly like a mask sent back.
      const shown = shownConfig(row.type, current.config, rules.secretPaths(row.type, row.config_json));
      candidate = patch.configJson ? patchTypedConfig(shown, patch.configJson, rules.schemas[type], CONFIG_FIELD) : shown;
    }
    // A new type starts from nothing: a mask can't stand for the old type's secret (a Discord token is no Telegram token).
    return { type, ...(await resolve(type, candidate, type === row.type ? current : null, caller.accountId)) };
  }

  /**
   * What a create must pass before its insert: the agent, its quota (a full one answers 403 before any
   * lookup), then the config with its checks that may wait on DNS. A route runs it as its preflight,
   * before an Idempotency-Key's transaction takes a connection; the create's own run finds the URLs
   * already checked in the same request.
   */
  async function checkCreate(caller: Caller, agentId: string, values: Values): Promise<Prepared> {
    await requireAgent(caller, agentId);
    await refuseWhenFull(deps.quota, 'agent', () => deps.quota.count(agentId, db));
    return prepare(caller, values);
  }

  return {
    checkCreate,

    async create(caller: Caller, agentId: string, values: Values): Promise<Shown> {
      const prepared = await checkCreate(caller, agentId, values);
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
      return { ...result, items: result.items.map((row) => presentStored(caller, row)) };
    },

    async get(caller: Caller, id: string): Promise<Shown> {
      const row = await repository.findById(caller.accountId, id);
      if (!row) throw new NotFoundError(deps.resource);
      return presentStored(caller, row);
    },

    /**
     * Partial update. configJson is a merge patch onto the current config, unless the type changes:
     * then it is required and replaces the config. The result is validated as a whole.
     */
    async update(caller: Caller, id: string, patch: Partial<Values>): Promise<Shown> {
      // The plan is made, and its URLs checked, on the row as read before the transaction: a lookup may
      // wait seconds, and must hold neither the row's lock nor a connection. The transaction plans again
      // on the locked row (a concurrent update may have changed it); a URL checked here is not looked up again.
      return withCheckedTargets(async () => {
        const seen = await repository.findById(caller.accountId, id);
        if (!seen) throw new NotFoundError(deps.resource);
        await plan(caller, seen, patch);
        return withTransaction(db, async (tx) => {
          const row = await repository.findByIdForUpdate(caller.accountId, id, tx);
          if (!row) throw new NotFoundError(deps.resource);
          const { type, sealed, shown } = await plan(caller, row, patch);
          const next: Values = { ...deps.valuesOf(row), ...patch, type, configJson: sealed };
          const updated = (await repository.update(caller.accountId, id, next, tx))!;
          await deps.audit.record(tx, caller, `${deps.auditAs}.update`, id);
          return deps.present(updated, forCaller(caller, type, shown));
        });
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
