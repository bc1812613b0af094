import { Context } from '@temporalio/activity';
import { withTransaction } from '../db/pool';
import { createAgentsRepository } from '../db/repositories/agents';
import { insertEvent } from '../db/repositories/events';
import { findRun, finishRun, markRunRunning } from '../db/repositories/runs';
import { createToolsRepository, type ToolRow } from '../db/repositories/tools';
import { startEventDispatch } from '../lib/engine-starts';
import { openConfig } from '../lib/secret-config';
import { toolSecretPaths } from '../lib/secret-paths';
import type { RunInput } from '../workflows/types';
import type { ActivityDeps } from './deps';
import { createDefaultExecutor } from './executor/default-executor';
import type { AgentExecutor } from './executor/types';

/** The activity's cancellation signal, when running inside one (tests may call the function directly). */
function activitySignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}

export function createRunActivities(deps: ActivityDeps, executor: AgentExecutor = createDefaultExecutor(deps.config)) {
  const { db, handOff } = deps;
  const agents = createAgentsRepository(db);
  const toolsRepository = createToolsRepository(db);

  /** The agent's enabled tools in created order, secrets opened for the executor. */
  async function enabledTools(agentId: string): Promise<ToolRow[]> {
    const rows = await toolsRepository.listEnabledForAgent(agentId);
    return rows.map((t) => ({ ...t, config_json: openConfig(t.config_json, toolSecretPaths(t.type, t.config_json), deps.secrets) }));
  }

  /**
   * queued/running → succeeded/failed with the output, and agent.completed / agent.failed, in one
   * transaction; a run already finished is left alone and emits nothing again.
   */
  async function finish(runId: string, status: 'succeeded' | 'failed', output: unknown, error: string | null): Promise<{ status: string }> {
    const finished = await withTransaction(db, async (tx) => {
      const row = await finishRun(tx, runId, { status, output, error });
      if (!row) return null;
      const base = { agentId: row.agent_id, runId: row.id };
      const event = await insertEvent(tx, {
        accountId: row.account_id,
        type: status === 'succeeded' ? 'agent.completed' : 'agent.failed',
        data:
          status === 'succeeded'
            ? { ...base, output: row.output, chainDepth: row.chain_depth }
            : { ...base, error: row.error, chainDepth: row.chain_depth },
        chainDepth: row.chain_depth,
      });
      await startEventDispatch(tx, event, { agentId: row.agent_id, triggerId: row.trigger_id });
      return row;
    });
    if (!finished) {
      const current = await findRun(db, runId);
      return { status: current ? current.status : 'gone' };
    }
    handOff.kick();
    return { status };
  }

  return {
    /**
     * Executes one run, idempotently under Temporal's retries: queued → running, execute the agent
     * (its status does not matter here: the API refuses to start runs of templates, a fire may run any
     * linked agent), then in one transaction running → succeeded/failed with the output and the
     * agent.completed / agent.failed event. A retry after the finish commits finds the run finished and
     * emits nothing again. Tools may be called again when an attempt dies mid-run (at-least-once).
     * An executor that throws fails the run (recorded, not retried); database errors are retried.
     */
    async executeRun(input: RunInput): Promise<{ status: string }> {
      const run = await markRunRunning(db, input.runId);
      if (!run) {
        const current = await findRun(db, input.runId);
        return { status: current ? current.status : 'gone' }; // gone: its agent was deleted
      }
      const agent = await agents.findById(run.account_id, run.agent_id);
      if (!agent) return { status: 'gone' };
      const tools = await enabledTools(agent.id);

      let output: unknown = null;
      let error: string | null;
      try {
        ({ output, error } = await executor.execute({ agent, tools, input: run.input, signal: activitySignal() }));
      } catch (err) {
        error = `the executor failed: ${(err as Error).message}`;
      }

      const status = error === null ? 'succeeded' : 'failed';
      return finish(run.id, status, output, error);
    },

    /**
     * The run workflow's last word when executeRun failed for good (every Temporal attempt): the run is
     * failed and agent.failed emitted, instead of staying `running` forever.
     */
    async failRun(input: RunInput & { error: string }): Promise<{ status: string }> {
      return finish(input.runId, 'failed', null, input.error);
    },
  };
}
