import type { PageRequest } from '../../db/paging';
import { withTransaction, type Db } from '../../db/pool';
import type { AgentsRepository } from '../../db/repositories/agents';
import { listRunStepsPage } from '../../db/repositories/run-steps';
import { findAccountRun, insertRun, listAccountRuns, listAgentRuns } from '../../db/repositories/runs';
import { listThreadMessages } from '../../db/repositories/thread-messages';
import { modelTokensToday } from '../../db/repositories/usage';
import { modelBudgetMessage, overModelBudget, runsWithModel, secondsToNextUtcDay } from '../../lib/model-settings';
import { startRun } from '../../engine/outbox/starts';
import type { Config } from '../../lib/config';
import type { HandOff } from '../../engine/outbox/handoff';
import { runLineLimits } from '../../engine/runs/run-line';
import { ConflictError, NotFoundError, TooManyRequestsError } from '../errors';
import { toRun, toRunStep, toThreadMessage, type Run, type RunStep } from '../mappers';
import type { IndexPage, IndexPageRequest } from '../pagination';
import type { CreateRunInput } from '../schemas/runs';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';

export function createRunService(deps: { db: Db; agents: AgentsRepository; handOff: HandOff; audit: AuditTrail; config: Pick<Config, 'runs' | 'model'> }) {
  const { db, agents, handOff, audit } = deps;
  const line = runLineLimits(deps.config);

  async function requireAgent(caller: Caller, agentId: string): Promise<void> {
    if (!(await agents.findById(caller.accountId, agentId))) throw new NotFoundError('Agent');
  }

  return {
    /**
     * Queues a run: the run row and its `run:<id>` workflow hand-off commit together, then the hand-off
     * is kicked. Draft and active agents run; templates and paused agents don't (409). (A run queued
     * before its agent was paused or made a template does not start either: activities/runs/admission.ts.) A run
     * that would use the model while the account has spent MODEL_TOKENS_PER_DAY is refused (429, until
     * the next UTC day); nothing is written.
     */
    async create(caller: Caller, agentId: string, body: CreateRunInput): Promise<Run> {
      const run = await withTransaction(db, async (tx) => {
        // Locked so the agent can't turn into a template or go away between the check and the insert.
        const agent = await agents.findByIdForUpdate(caller.accountId, agentId, tx);
        if (!agent) throw new NotFoundError('Agent');
        if (agent.status === 'template') throw new ConflictError('Agent is a template: templates cannot run; set another status first');
        if (agent.status === 'paused') throw new ConflictError('Agent is paused: paused agents cannot run; set another status first');
        if (runsWithModel(agent.config_json, deps.config.model) && overModelBudget(await modelTokensToday(tx, caller.accountId), deps.config.model.tokensPerDay)) {
          const retryAfter = secondsToNextUtcDay();
          throw new TooManyRequestsError(`${modelBudgetMessage(deps.config.model.tokensPerDay)}; runs that use the model start again in ${retryAfter} seconds`, retryAfter);
        }
        const run = await insertRun(tx, { accountId: caller.accountId, agentId, input: body?.input ?? null, threadId: body?.threadId ?? null });
        await startRun(tx, run, line);
        await audit.record(tx, caller, 'run.create', run.id);
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

    /** The account's runs across its agents (GET /api/runs), optionally of one agent and/or in one status. */
    async listAll(caller: Caller, filter: { agentId?: string; status?: string }, page: PageRequest) {
      const result = await listAccountRuns(db, caller.accountId, filter, page);
      return { ...result, items: result.items.map(toRun) };
    },

    async get(caller: Caller, id: string): Promise<Run> {
      const row = await findAccountRun(db, caller.accountId, id);
      if (!row) throw new NotFoundError('Run');
      return toRun(row);
    },

    /** A conversation thread of the agent, newest message first; a thread nothing was said in yet is empty. */
    async threadMessages(caller: Caller, agentId: string, threadId: string, page: PageRequest) {
      await requireAgent(caller, agentId);
      const result = await listThreadMessages(db, caller.accountId, agentId, threadId, page);
      return { ...result, items: result.items.map(toThreadMessage) };
    },

    /** The run's steps in the order they are made (not newest first: a run reads top to bottom). */
    async steps(caller: Caller, id: string, page: IndexPageRequest): Promise<IndexPage<RunStep>> {
      if (!(await findAccountRun(db, caller.accountId, id))) throw new NotFoundError('Run');
      const { items, more } = await listRunStepsPage(db, id, page);
      return { items: items.map(toRunStep), nextAfter: more ? items[items.length - 1]!.step_index : undefined };
    },
  };
}
export type RunService = ReturnType<typeof createRunService>;
