import type { Queryable } from '../../db/pool';
import type { AgentRow, AgentsRepository } from '../../db/repositories/agents';
import type { UsageRepository } from '../../db/repositories/usage';
import type { Config } from '../../lib/config';
import { modelBudgetMessage, overModelBudget, runsWithModel, secondsToNextUtcDay } from '../../lib/model-settings';
import { ConflictError, NotFoundError, TooManyRequestsError } from '../errors';
import type { Caller } from './auth-service';

/**
 * What every run started through the API passes (a run, a rerun, a replay), in the caller's transaction: the
 * agent, locked so it can't turn into a template or go away before the run is written; 404 when it is gone,
 * 409 a template or paused (a run queued before that does not start either: engine/runs/admission.ts), 429
 * when its runs use the model and the account has spent MODEL_TOKENS_PER_DAY (until the next UTC day).
 */
export async function admitRunsOf(
  q: Queryable,
  deps: { agents: AgentsRepository; usage: UsageRepository; config: Pick<Config, 'model'> },
  caller: Caller,
  agentId: string,
): Promise<AgentRow> {
  const agent = await deps.agents.findByIdForUpdate(caller.accountId, agentId, q);
  if (!agent) throw new NotFoundError('Agent');
  if (agent.status === 'template') throw new ConflictError('Agent is a template: templates cannot run; set another status first');
  if (agent.status === 'paused') throw new ConflictError('Agent is paused: paused agents cannot run; set another status first');
  if (runsWithModel(agent.config_json, deps.config.model) && overModelBudget(await deps.usage.modelTokensToday(caller.accountId, q), deps.config.model.tokensPerDay)) {
    const retryAfter = secondsToNextUtcDay();
    throw new TooManyRequestsError(`${modelBudgetMessage(deps.config.model.tokensPerDay)}; runs that use the model start again in ${retryAfter} seconds`, retryAfter);
  }
  return agent;
}
