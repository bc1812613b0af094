import type { PageRequest } from '../../db/paging';
import type { PoolClient } from 'pg';
import type { Db } from '../../db/pool';
import type { AccountsRepository } from '../../db/repositories/accounts';
import type { AgentRow, AgentsRepository, AgentValues } from '../../db/repositories/agents';
import type { Engine, Unit } from '../../engine';
import { modelNotAllowed } from '../../lib/model-settings';
import { NotFoundError, ValidationError } from '../errors';
import { toAgent } from '../mappers';
import { DEFAULT_MEMORY_CONFIG, type CreateAgentInput, type UpdateAgentInput } from '../schemas/agents';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { charge } from './billing';

function valuesOf(row: AgentRow): AgentValues {
  return {
    name: row.name,
    description: row.description,
    goal: row.goal,
    persona: row.persona,
    voice: row.voice,
    systemPrompt: row.system_prompt,
    policies: row.policies,
    memoryConfig: row.memory_config,
    configJson: row.config_json,
    status: row.status,
    graph: row.graph,
  };
}

/** The data of agent.created / agent.updated / agent.deleted. */
const eventData = (row: AgentRow) => ({ agentId: row.id, name: row.name, status: row.status });

/** Writes an event's fan-out in the change's transaction; what must be handed off is kept for after the commit. */
export function createAgentService(deps: {
  db: Db;
  agents: AgentsRepository;
  accounts: AccountsRepository;
  /** The engine's unit of work: each change's event and its fan-out, handed off after the commit. */
  engine: Pick<Engine, 'transaction'>;
  audit: AuditTrail;
  agentCreateCost: number;
  /** MODEL_ALLOWED: the models an agent's configJson.model may name; null: any. */
  allowedModels: readonly string[] | null;
}) {
  const { agents, accounts, audit, engine } = deps;

  /** Refuses (400, naming `field`) a configJson whose model is outside MODEL_ALLOWED; checked before anything is written. */
  function checkModel(configJson: unknown, field: string): void {
    const problem = modelNotAllowed((configJson as { model?: unknown } | undefined)?.model, deps.allowedModels);
    if (problem) throw new ValidationError(`${field}: ${problem}`);
  }

  /**
   * Every agent change is a unit of work of the engine (engine/unit.ts): its event is emitted in the
   * change's own transaction (the event and its fan-out), and what it queued is handed off after the
   * commit, with the first attempts of its deliveries. A change that writes rows whose database
   * triggers queue outbox rows (deleting an agent deletes its triggers: their schedules' sync) says so
   * (`unit.queued()`), so the hand-off looks.
   */
  const committed = engine.transaction;

  async function mutate(caller: Caller, id: string, change: (current: AgentValues) => AgentValues) {
    return committed(async (tx, unit) => {
      const row = await agents.findByIdForUpdate(caller.accountId, id, tx);
      if (!row) throw new NotFoundError('Agent');
      const next = change(valuesOf(row));
      const updated = (await agents.update(caller.accountId, id, next, tx))!;
      await unit.emit({ accountId: caller.accountId, type: 'agent.updated', data: eventData(updated) }, { agentId: id });
      await audit.entry(tx, caller, 'agent.update', id);
      // Leaving `template` is charged like a creation; otherwise templates would dodge the charge. Last, as in create.
      if (row.status === 'template' && next.status !== 'template') await chargeCreation(tx, caller, id, 'agent.from_template');
      await audit.holdMembership(tx, caller);
      return toAgent(updated);
    });
  }

  /**
   * A non-template agent costs AGENT_CREATE_COST (402 when short). The charge locks the account's row until
   * the commit, and every write that charges the account waits for it in turn, so each write takes it as its
   * last statement (before a member's membership is held, as audit.record would): the row is held for one
   * statement and the commit, as bare Fastify + pg holds it (docs/adr/0011-account-lock-last.md). Every lock
   * the write needs besides (the webhooks its event's fan-out counts, the membership) is taken before it or
   * shared, in that order in every agent write, so no cycle can form.
   */
  async function chargeCreation(tx: PoolClient, caller: Caller, agentId: string, reason: 'agent.create' | 'agent.from_template'): Promise<void> {
    await charge(accounts, tx, { accountId: caller.accountId, amount: deps.agentCreateCost, reason, resourceId: agentId, actorUserId: caller.userId });
  }

  /** Inserts an agent and its agent.created event, in the caller's transaction; the caller charges it (chargeCreation). */
  async function insertAgent(unit: Unit, caller: Caller, input: CreateAgentInput): Promise<AgentRow> {
    const { tx } = unit;
    const row = await agents.insert(
      caller.accountId,
      {
        name: input.name,
        description: input.description ?? '',
        goal: input.goal ?? '',
        persona: input.persona ?? '',
        voice: input.voice ?? '',
        systemPrompt: input.systemPrompt ?? '',
        policies: input.policies ?? [],
        memoryConfig: { ...DEFAULT_MEMORY_CONFIG, ...input.memoryConfig },
        configJson: input.configJson ?? {},
        status: input.status ?? 'draft',
        graph: input.graph ?? { nodes: [], edges: [] },
      },
      tx,
    );
    await unit.emit({ accountId: caller.accountId, type: 'agent.created', data: eventData(row) }, { agentId: row.id });
    return row;
  }

  return {
    /** The agent and its charge are one transaction: both happen or neither. */
    async create(caller: Caller, input: CreateAgentInput) {
      checkModel(input.configJson, 'body.configJson.model');
      return committed(async (tx, unit) => {
        const row = await insertAgent(unit, caller, input);
        await audit.entry(tx, caller, 'agent.create', row.id);
        if (row.status !== 'template') await chargeCreation(tx, caller, row.id, 'agent.create');
        await audit.holdMembership(tx, caller);
        return toAgent(row);
      });
    },

    /**
     * Runs `more` in the unit of work of an agent's creation (charged and evented like create), which
     * then hands off what it queued. An import creates the agent's children there.
     */
    async createWith<T>(caller: Caller, input: CreateAgentInput, more: (tx: PoolClient, agent: AgentRow) => Promise<T>): Promise<T> {
      checkModel(input.configJson, 'body.agent.configJson.model');
      // An import writes the agent's triggers.
      return committed(async (tx, unit) => {
        const row = await insertAgent(unit, caller, input);
        if (row.status !== 'template') await chargeCreation(tx, caller, row.id, 'agent.create');
        unit.queued(); // an import writes the agent's triggers: their schedules' sync
        return more(tx, row);
      });
    },

    async get(caller: Caller, id: string) {
      const row = await agents.findById(caller.accountId, id);
      if (!row) throw new NotFoundError('Agent');
      return toAgent(row);
    },

    async list(caller: Caller, page: PageRequest, filter: { text?: string; status?: string } = {}) {
      const result = await agents.list(caller.accountId, page, filter);
      return { ...result, items: result.items.map(toAgent) };
    },

    async update(caller: Caller, id: string, patch: UpdateAgentInput) {
      // Only a configJson sent is checked: an agent whose stored model is no longer allowed keeps its other updates (its runs fail).
      if (patch.configJson !== undefined) checkModel(patch.configJson, 'body.configJson.model');
      return mutate(caller, id, (current) => ({
        ...current,
        ...patch,
        memoryConfig: { ...current.memoryConfig, ...patch.memoryConfig },
      }));
    },

    async getGraph(caller: Caller, id: string) {
      return (await this.get(caller, id)).graph;
    },

    async setGraph(caller: Caller, id: string, graph: AgentValues['graph']) {
      return (await mutate(caller, id, (current) => ({ ...current, graph }))).graph;
    },

    async delete(caller: Caller, id: string): Promise<void> {
      // Deleting its triggers queues their schedules' removal (a database trigger on `triggers`).
      await committed(async (tx, unit) => {
        const row = await agents.findByIdForUpdate(caller.accountId, id, tx);
        if (!row || !(await agents.delete(caller.accountId, id, tx))) throw new NotFoundError('Agent');
        await unit.emit({ accountId: caller.accountId, type: 'agent.deleted', data: eventData(row) }, { agentId: id });
        await audit.record(tx, caller, 'agent.delete', id);
        unit.queued(); // its triggers go with it: their schedules' sync
      });
    },
  };
}
export type AgentService = ReturnType<typeof createAgentService>;
