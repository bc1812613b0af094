import type { PageRequest } from '../../db/paging';
import { withTransaction, type Db } from '../../db/pool';
import type { AccountsRepository } from '../../db/repositories/accounts';
import type { AgentRow, AgentsRepository, AgentValues } from '../../db/repositories/agents';
import { NotFoundError } from '../errors';
import { toAgent } from '../mappers';
import { DEFAULT_MEMORY_CONFIG, type CreateAgentInput, type UpdateAgentInput } from '../schemas/agents';
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

export function createAgentService(deps: { db: Db; agents: AgentsRepository; accounts: AccountsRepository; agentCreateCost: number }) {
  const { db, agents, accounts } = deps;

  async function mutate(caller: Caller, id: string, change: (current: AgentValues) => AgentValues) {
    return withTransaction(db, async (tx) => {
      const row = await agents.findByIdForUpdate(caller.accountId, id, tx);
      if (!row) throw new NotFoundError('Agent');
      const next = change(valuesOf(row));
      // Leaving `template` is charged like a creation; otherwise templates would dodge the charge.
      if (row.status === 'template' && next.status !== 'template') {
        await charge(accounts, tx, { accountId: caller.accountId, amount: deps.agentCreateCost, reason: 'agent.from_template', resourceId: id });
      }
      return toAgent((await agents.update(caller.accountId, id, next, tx))!);
    });
  }

  return {
    /** The agent and its charge are one transaction: both happen or neither. */
    async create(caller: Caller, input: CreateAgentInput) {
      return withTransaction(db, async (tx) => {
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
        if (row.status !== 'template') {
          await charge(accounts, tx, { accountId: caller.accountId, amount: deps.agentCreateCost, reason: 'agent.create', resourceId: row.id });
        }
        return toAgent(row);
      });
    },

    async get(caller: Caller, id: string) {
      const row = await agents.findById(caller.accountId, id);
      if (!row) throw new NotFoundError('Agent');
      return toAgent(row);
    },

    async list(caller: Caller, page: PageRequest) {
      const result = await agents.list(caller.accountId, page);
      return { ...result, items: result.items.map(toAgent) };
    },

    async update(caller: Caller, id: string, patch: UpdateAgentInput) {
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
      const deleted = await withTransaction(db, (tx) => agents.delete(caller.accountId, id, tx));
      if (!deleted) throw new NotFoundError('Agent');
    },
  };
}
export type AgentService = ReturnType<typeof createAgentService>;
