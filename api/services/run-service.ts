import type { PageRequest } from '../../db/paging';
import { withTransaction, type Db } from '../../db/pool';
import type { AgentsRepository } from '../../db/repositories/agents';
import { findAccountRun, insertRun, listAgentRuns } from '../../db/repositories/runs';
import { startRun } from '../../lib/engine-starts';
import type { HandOff } from '../../lib/handoff';
import { ConflictError, NotFoundError } from '../errors';
import { toRun, type Run } from '../mappers';
import type { CreateRunInput } from '../schemas/runs';
import type { Caller } from './auth-service';

export function createRunService(deps: { db: Db; agents: AgentsRepository; handOff: HandOff }) {
  const { db, agents, handOff } = deps;

  async function requireAgent(caller: Caller, agentId: string): Promise<void> {
    if (!(await agents.findById(caller.accountId, agentId))) throw new NotFoundError('Agent');
  }

  return {
    /**
     * Queues a run: the run row and its `run:<id>` workflow hand-off commit together, then the hand-off
     * is kicked. Templates don't run (409); draft, active and paused agents do (pausing an agent is a
     * matter of its triggers).
     */
    async create(caller: Caller, agentId: string, body: CreateRunInput): Promise<Run> {
      const run = await withTransaction(db, async (tx) => {
        // Locked so the agent can't turn into a template or go away between the check and the insert.
        const agent = await agents.findByIdForUpdate(caller.accountId, agentId, tx);
        if (!agent) throw new NotFoundError('Agent');
        if (agent.status === 'template') throw new ConflictError('Agent is a template: templates cannot run; set another status first');
        const run = await insertRun(tx, { accountId: caller.accountId, agentId, input: body?.input ?? null });
        await startRun(tx, run);
        return run;
      });
      handOff.kick();
      return toRun(run);
    },

    async list(caller: Caller, agentId: string, page: PageRequest) {
      await requireAgent(caller, agentId);
      const result = await listAgentRuns(db, caller.accountId, agentId, page);
      return { ...result, items: result.items.map(toRun) };
    },

    async get(caller: Caller, id: string): Promise<Run> {
      const row = await findAccountRun(db, caller.accountId, id);
      if (!row) throw new NotFoundError('Run');
      return toRun(row);
    },
  };
}
export type RunService = ReturnType<typeof createRunService>;
