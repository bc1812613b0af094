import { randomBytes } from 'node:crypto';
import type { PageRequest } from '../../db/paging';
import type { PoolClient } from 'pg';
import type { Db, Queryable } from '../../db/pool';
import type { AgentsRepository } from '../../db/repositories/agents';
import type { QuotasRepository } from '../../db/repositories/quotas';
import { isAgentGone, isWebhookPathTaken, type TriggerRow, type TriggerScope, type TriggersRepository, type TriggerValues } from '../../db/repositories/triggers';
import { nextFireTime } from '../../lib/cron';
import { isScheduled, type Engine } from '../../engine';
import { openConfig, pathKey, presentConfig, sealConfig, type Config } from '../../lib/secret-config';
import { TRIGGER_SECRET_PATHS } from '../../lib/secret-paths';
import type { SecretBox } from '../../lib/secrets';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import { toTrigger, type Trigger } from '../mappers';
import type { CreateTriggerInput, UpdateTriggerInput } from '../schemas/trigger-bodies';
import { configSchemaFor, type TriggerType } from '../schemas/trigger-configs';
import { parseWith, patchTypedConfig } from '../validation';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { restoreMasked } from './masked-secrets';
import { withinAccountQuota } from './quotas';

const CONFIG_FIELD = 'body.configJson';

/** 24 lower-case hex characters: 96 bits, so a clash with an existing path is never expected. */
const generateWebhookPath = () => randomBytes(12).toString('hex');
/** 32 random bytes, base64url (43 characters). */
const generateSecretToken = () => randomBytes(32).toString('base64url');

/**
 * Agent triggers (scope 'agent', under /api/agents/:agentId/triggers and /api/triggers/:id) and
 * standalone user triggers (scope 'user', /api/user-triggers) share one table and these rules
 * (docs/api.md § Triggers). Each scope only ever sees its own rows: a user trigger's id is unknown to the
 * agent-trigger routes and the other way round.
 */
export function createTriggerService(deps: {
  db: Db;
  triggers: TriggersRepository;
  agents: AgentsRepository;
  secrets: SecretBox;
  publicBaseUrl: string;
  /** The engine's unit of work: every write to `triggers` queues its schedule's sync (a database trigger), handed off after the commit. */
  engine: Pick<Engine, 'transaction'>;
  quotas: QuotasRepository;
  /** QUOTA_TRIGGERS */
  quota: number;
  audit: AuditTrail;
  now?: () => Date;
}) {
  const { triggers, agents, secrets, engine, quotas, audit } = deps;
  const now = deps.now ?? (() => new Date());

  /** A write to `triggers`, in a unit of work: the database trigger on the table queued the schedule's sync in it. */
  function written<T>(fn: (tx: PoolClient) => Promise<T>): Promise<T> {
    return engine.transaction(async (tx, unit) => {
      const result = await fn(tx);
      unit.queued();
      return result;
    });
  }

  function present(row: TriggerRow, plain: Config, revealed: ReadonlySet<string> = new Set()): Trigger {
    const scheduled = row.enabled && isScheduled(row.type);
    // From the expression, which means what the schedule's spec means (lib/cron.ts): no Temporal call per read or fire.
    return toTrigger(row, {
      configJson: presentConfig(plain, TRIGGER_SECRET_PATHS[row.type], revealed),
      nextFireAt: scheduled ? nextFireTime(String(plain.cronExpression), String(plain.timezone), now()) : null,
      hookUrl: row.webhook_path ? `${deps.publicBaseUrl}/api/hooks/triggers/${row.webhook_path}` : null,
    });
  }

  /** A stored row as every read shows it: secrets masked. */
  const presentStored = (row: TriggerRow) => present(row, openConfig(row.config_json, TRIGGER_SECRET_PATHS[row.type], secrets));

  /**
   * The config to store for `type`, from a candidate (a create's configJson, or the merged/replacing
   * one of an update) and the current plain config ({} on a create or a type change). Masked secrets
   * are put back, defaults filled in, and the webhook path and token generated when absent.
   */
  function resolveConfig(type: TriggerType, candidate: Config, current: Config, field = CONFIG_FIELD) {
    const paths = TRIGGER_SECRET_PATHS[type];
    const restored = restoreMasked(candidate, current, paths, field);
    const config: Config = parseWith(configSchemaFor(type), restored.config, field);
    const revealed = new Set(restored.revealed);
    if (type === 'webhook') {
      config.webhookPath ??= generateWebhookPath();
      if (config.secretToken === undefined) {
        config.secretToken = generateSecretToken();
        revealed.add(pathKey(['secretToken']));
      }
    }
    return { plain: config, sealed: sealConfig(config, paths, secrets), revealed };
  }

  /** Maps the write's constraint violations to answers; anything else propagates. */
  function translateWriteError(err: unknown, agentMissing: () => Error): never {
    if (isWebhookPathTaken(err)) throw new ConflictError(`${CONFIG_FIELD}.webhookPath: is already in use`);
    if (isAgentGone(err)) throw agentMissing();
    throw err;
  }

  const agentNotFound = () => new NotFoundError('Agent');
  const agentNotInAccount = () => new ValidationError('body.agentId: no agent with this id in your account');

  async function requireAgent(caller: Caller, agentId: string, missing: () => Error): Promise<void> {
    if (!(await agents.findById(caller.accountId, agentId))) throw missing();
  }

  /** A trigger validated (config defaulted, secrets sealed), ready to insert. */
  interface Prepared {
    input: CreateTriggerInput;
    resolved: ReturnType<typeof resolveConfig>;
  }

  /** Validates a new trigger's config for its type; errors name the config as `field` does. */
  function prepare(input: CreateTriggerInput, field = CONFIG_FIELD): Prepared {
    return { input, resolved: resolveConfig(input.type, input.configJson ?? {}, {}, field) };
  }

  /**
   * Inserts a prepared trigger in the caller's transaction, within the account's quota (the agent
   * locked first, as an agent update does). `missing` is the error when the agent is not the account's.
   */
  async function insertPrepared(tx: Queryable, caller: Caller, scope: TriggerScope, agentId: string | null, prepared: Prepared, missing: () => Error) {
    if (agentId !== null && !(await quotas.keepAgent(caller.accountId, agentId, tx))) throw missing();
    await withinAccountQuota(quotas, tx, caller.accountId, { limit: deps.quota, plural: 'triggers' }, quotas.countTriggers);
    const { input, resolved } = prepared;
    const values: TriggerValues = { agentId, type: input.type, name: input.name, configJson: resolved.sealed, enabled: input.enabled ?? true };
    try {
      const row = await triggers.insert(caller.accountId, scope, values, tx);
      return { row, item: present(row, resolved.plain, resolved.revealed) };
    } catch (err) {
      return translateWriteError(err, missing);
    }
  }

  async function create(caller: Caller, scope: TriggerScope, agentId: string | null, input: CreateTriggerInput): Promise<Trigger> {
    const missing = scope === 'agent' ? agentNotFound : agentNotInAccount;
    const item = await written(async (tx) => {
      const { row, item } = await insertPrepared(tx, caller, scope, agentId, prepare(input), missing);
      await audit.record(tx, caller, 'trigger.create', row.id);
      return item;
    });
    return item;
  }

  async function list(caller: Caller, scope: TriggerScope, page: PageRequest, agentId?: string) {
    const result = scope === 'agent' ? await triggers.listForAgent(caller.accountId, agentId!, page) : await triggers.listUserTriggers(caller.accountId, page);
    return { ...result, items: result.items.map(presentStored) };
  }

  return {
    prepare,
    /** For an import: an agent trigger of the agent, in the caller's transaction (see insertPrepared). */
    insertPreparedForAgent: (tx: Queryable, caller: Caller, agentId: string, prepared: Prepared) =>
      insertPrepared(tx, caller, 'agent', agentId, prepared, agentNotFound),

    async listForAgent(caller: Caller, agentId: string, page: PageRequest) {
      await requireAgent(caller, agentId, agentNotFound);
      return list(caller, 'agent', page, agentId);
    },

    async createForAgent(caller: Caller, agentId: string, input: CreateTriggerInput): Promise<Trigger> {
      return create(caller, 'agent', agentId, { ...input, agentId: undefined });
    },

    async listUserTriggers(caller: Caller, page: PageRequest) {
      return list(caller, 'user', page);
    },

    async createUserTrigger(caller: Caller, input: CreateTriggerInput): Promise<Trigger> {
      return create(caller, 'user', input.agentId ?? null, input);
    },

    async get(caller: Caller, scope: TriggerScope, id: string): Promise<Trigger> {
      const row = await triggers.findById(caller.accountId, scope, id);
      if (!row) throw new NotFoundError('Trigger');
      return presentStored(row);
    },

    /**
     * Partial update. configJson is a merge patch onto the current config, unless the type changes:
     * then it is required and replaces the config. The result is validated (and defaulted) as a whole.
     * A webhook trigger whose webhookPath or secretToken is removed (null) gets a new generated one.
     * `agentId` is writable for user triggers only (the routes of agent triggers don't accept it).
     */
    async update(caller: Caller, scope: TriggerScope, id: string, patch: UpdateTriggerInput): Promise<Trigger> {
      const missing = agentNotInAccount;
      try {
        const updated = await written(async (tx) => {
          const row = await triggers.findByIdForUpdate(caller.accountId, scope, id, tx);
          if (!row) throw new NotFoundError('Trigger');
          const current = openConfig(row.config_json, TRIGGER_SECRET_PATHS[row.type], secrets);
          const type = patch.type ?? row.type;
          let resolved: ReturnType<typeof resolveConfig>;
          if (type !== row.type) {
            if (!patch.configJson) throw new ValidationError(`${CONFIG_FIELD}: is required when type changes (it replaces the config)`);
            resolved = resolveConfig(type, patchTypedConfig(null, patch.configJson, configSchemaFor(type), CONFIG_FIELD), {});
          } else {
            const candidate = patch.configJson ? patchTypedConfig(current, patch.configJson, configSchemaFor(type), CONFIG_FIELD) : current;
            resolved = resolveConfig(type, candidate, current);
          }
          let agentId = row.agent_id;
          if (scope === 'user' && patch.agentId !== undefined) {
            if (patch.agentId !== null) await requireAgent(caller, patch.agentId, missing);
            agentId = patch.agentId;
          }
          const values: TriggerValues = {
            agentId,
            type,
            name: patch.name ?? row.name,
            configJson: resolved.sealed,
            enabled: patch.enabled ?? row.enabled,
          };
          const updated = await triggers.update(caller.accountId, scope, id, values, tx);
          await audit.record(tx, caller, 'trigger.update', id);
          return present(updated!, resolved.plain, resolved.revealed);
        });
        return updated;
      } catch (err) {
        return translateWriteError(err, missing);
      }
    },

    async delete(caller: Caller, scope: TriggerScope, id: string): Promise<void> {
      await written(async (tx) => {
        if (!(await triggers.delete(caller.accountId, scope, id, tx))) throw new NotFoundError('Trigger');
        await audit.record(tx, caller, 'trigger.delete', id);
      });
    },
  };
}
export type TriggerService = ReturnType<typeof createTriggerService>;
