import type { AgentRow } from '../../../db/repositories/agents';
import type { RunExecutor } from '../../../db/repositories/runs';
import type { Config } from '../../../lib/config';
import { runsWithModel } from '../../../lib/model-settings';
import { createDefaultExecutor } from './default-executor';
import { createModelClient, type ModelClient } from './model-client';
import { createModelExecutor } from './model-executor';
import type { AgentExecutor } from './types';

/**
 * Which executor runs an agent ("with a language model when one is configured; otherwise
 * today's tool executor"): the model executor when the deployment has a model provider (MODEL_BASE_URL)
 * and a model is named for the agent (its configJson.model, else MODEL_NAME); the tool executor
 * otherwise. Decided when a run starts running and kept on the run (`runs.executor`), so a run is
 * finished by the executor that planned it whatever changes meanwhile.
 */
export interface Executors {
  kindFor(agent: AgentRow): RunExecutor;
  get(kind: RunExecutor): AgentExecutor;
  /** The model provider's client; null when MODEL_BASE_URL is not set. */
  model: ModelClient | null;
}

export function createExecutors(config: Pick<Config, 'model'>): Executors {
  const executors: Record<RunExecutor, AgentExecutor> = {
    tools: createDefaultExecutor(),
    model: createModelExecutor({ model: config.model.name, allowed: config.model.allowed, contextMaxBytes: config.model.contextMaxBytes }),
  };
  const model = createModelClient(config.model);
  return {
    kindFor(agent) {
      return model && runsWithModel(agent.config_json, config.model) ? 'model' : 'tools';
    },
    get: (kind) => executors[kind],
    model,
  };
}
