import type { PageRequest } from '../../db/paging';
import type { PoolClient } from 'pg';
import { withTransaction, type Db } from '../../db/pool';
import type { AccountsRepository } from '../../db/repositories/accounts';
import type { AgentRow, AgentsRepository, AgentValues } from '../../db/repositories/agents';
import { insertEvent, type EventRow } from '../../db/repositories/events';
import type { EventAbout, EventFanOut } from '../../engine/events/fan-out';
import type { FirstAttempt } from '../../engine/outbox/starts';
import type { HandOff } from '../../engine/outbox/handoff';
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
type Emit = (event: EventRow, about: EventAbout) => Promise<void>;

export function createAgentService(deps: {
  db: Db;
  agents: AgentsRepository;
  accounts: AccountsRepository;
  handOff: HandOff;
  audit: AuditTrail;
  /** Writes each event's deliveries and fires in the change's transaction. */
  fanOut: EventFanOut;
  agentCreateCost: number;
  /** MODEL_ALLOWED: the models an agent's configJson.model may name; null: any. */
  allowedModels: readonly string[] | null;
}) {
  const { db, agents, accounts, handOff, audit, fanOut } = deps;

  /** Refuses (400, naming `field`) a configJson whose model is outside MODEL_ALLOWED; checked before anything is written. */
  function checkModel(configJson: unknown, field: string): void {
    const problem = modelNotAllowed((configJson as { model?: unknown } | undefined)?.model, deps.allowedModels);
    if (problem) throw new ValidationError(`${field}: ${problem}`);
  }

  /**
   * Every agent change emits its event in the change's own transaction (`emit`: the event and its
   * fan-out), then hands off what it queued and makes the first attempts of its deliveries. A change
   * whose fan-out queued nothing skips the hand-off (its claim of the outbox is a query) unless
   * `writesOutbox`: it writes rows whose database triggers queue outbox rows (a trigger's schedule
   * sync), so the hand-off looks.
   */
  async function committed<T>(fn: (tx: PoolClient, emit: Emit) => Promise<T>, writesOutbox = false): Promise<T> {
    const held: FirstAttempt[] = [];
    let queued = writesOutbox;
    const result = await withTransaction(db, (tx) => fn(tx, async (event, about) => {
      const fannedOut = await fanOut.fanOutEvent(tx, event, about);
      held.push(...fannedOut.held);
      queued ||= fannedOut.queued;
    }));
    if (queued) handOff.kick(held);
    return result;
  }

  async function mutate(caller: Caller, id: string, change: (current: AgentValues) => AgentValues) {
    return committed(async (tx, emit) => {
      const row = await agents.findByIdForUpdate(caller.accountId, id, tx);
      if (!row) throw new NotFoundError('Agent');
      const next = change(valuesOf(row));
      const updated = (await agents.update(caller.accountId, id, next, tx))!;
      const event = await insertEvent(tx, { accountId: caller.accountId, type: 'agent.updated', data: eventData(updated) });
      await emit(event, { agentId: id });
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
  async function insertAgent(tx: PoolClient, emit: Emit, caller: Caller, input: CreateAgentInput): Promise<AgentRow> {
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
    const event = await insertEvent(tx, { accountId: caller.accountId, type: 'agent.created', data: eventData(row) });
    await emit(event, { agentId: row.id });
    return row;
  }

  return {
    /** The agent and its charge are one transaction: both happen or neither. */
    async create(caller: Caller, input: CreateAgentInput) {
      checkModel(input.configJson, 'body.configJson.model');
      return committed(async (tx, emit) => {
        const row = await insertAgent(tx, emit, caller, input);
        await audit.entry(tx, caller, 'agent.create', row.id);
        if (row.status !== 'template') await chargeCreation(tx, caller, row.id, 'agent.create');
        await audit.holdMembership(tx, caller);
        return toAgent(row);
      });
    },

    /**
     * Runs `more` in the transaction of an agent's creation (charged and evented like create), then hands
     * off what it queued. An import creates the agent's children there.
     */
    async createWith<T>(caller: Caller, input: CreateAgentInput, more: (tx: PoolClient, agent: AgentRow) => Promise<T>): Promise<T> {
      checkModel(input.configJson, 'body.agent.configJson.model');
      // An import writes the agent's triggers.
      return committed(async (tx, emit) => {
        const row = await insertAgent(tx, emit, caller, input);
        if (row.status !== 'template') await chargeCreation(tx, caller, row.id, 'agent.create');
        return more(tx, row);
      }, true);
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
      await committed(async (tx, emit) => {
        const row = await agents.findByIdForUpdate(caller.accountId, id, tx);
        if (!row || !(await agents.delete(caller.accountId, id, tx))) throw new NotFoundError('Agent');
        const event = await insertEvent(tx, { accountId: caller.accountId, type: 'agent.deleted', data: eventData(row) });
        await emit(event, { agentId: id });
        await audit.record(tx, caller, 'agent.delete', id);
      }, true); // its triggers go with it
    },
  };
}
export type AgentService = ReturnType<typeof createAgentService>;
