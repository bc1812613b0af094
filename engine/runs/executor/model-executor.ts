import type { RunStepRow } from '../../../db/repositories/run-steps';
import { modelNotAllowed, modelSettingsOf } from '../../../lib/model-settings';
import { capError, jsonBytes, MAX_RUN_OUTPUT_BYTES } from './output-cap';
import { contextOf, fitRequest, requestOf, type ContextMessage, type ModelAnswer, type ModelContext, type ToolStepInput, type Usage } from './model-step';
import { composeSystemMessage, userMessage } from './system-message';
import { mcpCallOf, mcpToolRefs } from './mcp-tool';
import { applyArguments, offerTools } from './tool-functions';
import type { AgentExecutor, ComposeContext, ExecutionResult, PlanContext } from './types';

/** One step in a model run's output: what it was and whether it worked (the steps API has the rest). */
export interface StepSummary {
  index: number;
  type: RunStepRow['type'];
  name: string;
  ok: boolean;
  error?: string;
  durationMs: number;
}

/** A model run's output (`runs.output`, and agent.completed's `data.output`). */
export interface ModelRunOutput {
  /** The model's last answer in text: what agent_output filters and chains read as `text`. */
  text: string;
  steps: StepSummary[];
  usage: Usage;
  [key: string]: unknown;
}

const durationMs = (s: RunStepRow, end: Date) => (s.started_at ? Math.max(0, (s.finished_at ?? end).getTime() - s.started_at.getTime()) : 0);

function summaryOf(s: RunStepRow, end: Date): StepSummary {
  const base = { index: s.step_index, type: s.type, name: s.name, durationMs: durationMs(s, end) };
  if (!s.finished_at) return { ...base, ok: false, error: s.started_at ? 'timed out' : 'not started' };
  return s.error === null ? { ...base, ok: true } : { ...base, ok: false, error: s.error };
}

/**
 * Makes the output fit MAX_RUN_OUTPUT_BYTES: the steps' errors go first (largest first; each step keeps
 * ok: false), then the text is cut, with "…", to what fits.
 */
function fitOutput(output: ModelRunOutput): void {
  let total = jsonBytes(output);
  const failed = output.steps.filter((s) => s.error !== undefined).sort((a, b) => b.error!.length - a.error!.length);
  for (const step of failed) {
    if (total <= MAX_RUN_OUTPUT_BYTES) return;
    total -= jsonBytes(step) - jsonBytes({ ...step, error: undefined });
    delete step.error;
  }
  // Cut at a character boundary (toString drops a partial one); removing n bytes of text removes at least
  // n bytes of JSON (escapes only add), so this ends in a pass or two.
  let text = Buffer.from(output.text, 'utf8');
  while (total > MAX_RUN_OUTPUT_BYTES && text.length > 0) {
    text = text.subarray(0, Math.max(0, text.length - (total - MAX_RUN_OUTPUT_BYTES) - 8));
    output.text = `${text.toString('utf8').replace(/\uFFFD$/, '')}…`;
    total = jsonBytes(output);
  }
}

/**
 * The model executor: a run is a conversation with a language model that may call the
 * agent's enabled tools. It plans one model step whose input is the run's context (model, temperature,
 * maxSteps, the composed system message, the thread's remembered messages, the user's message, the tools
 * offered); each model step's answer adds the tool calls it asks for and the next model step
 * (model-step.ts), up to `maxSteps` model calls. The run succeeds with the model's last text; it fails
 * when a model call failed (the provider's message), when the model still asked for tools at its last
 * allowed call, or when its time ran out. A tool's failure is the model's to read, not the run's.
 */
export function createModelExecutor(defaults: { model: string | null; allowed?: readonly string[] | null; contextMaxBytes?: number }): AgentExecutor {
  const contextMaxBytes = defaults.contextMaxBytes ?? Infinity;
  return {
    /**
     * The run's one model step, its context composed: the system message, the thread's remembered
     * messages that fit MODEL_CONTEXT_MAX_BYTES with the rest (the oldest left out first) and the user's
     * message. Throws (the run fails) when the agent's model is not among MODEL_ALLOWED.
     */
    plan({ agent, tools, input, history }: PlanContext) {
      const settings = modelSettingsOf(agent.config_json, defaults.model);
      if (!settings.model) throw new Error('no model: set configJson.model on the agent or MODEL_NAME on the deployment');
      const notAllowed = modelNotAllowed(settings.model, defaults.allowed ?? null);
      if (notAllowed) throw new Error(`configJson.model: ${notAllowed}; the run is not sent to it`);
      const system = composeSystemMessage(agent);
      const user = userMessage(input);
      const messages: ContextMessage[] = [
        ...(system !== null ? [{ role: 'system' as const, content: system }] : []),
        ...history.map((m) => ({ role: m.role, content: m.content })),
        ...(user !== null ? [{ role: 'user' as const, content: user }] : []),
      ];
      const context: ModelContext = {
        model: settings.model,
        temperature: settings.temperature,
        maxSteps: settings.maxSteps,
        messages,
        tools: offerTools(tools.filter((t) => t.type !== 'mcp')),
        remembered: history.length,
      };
      const mcpTools = mcpToolRefs(tools);
      if (mcpTools) context.mcpTools = mcpTools;
      // Left out here, the oldest first, the remembered messages that do not fit beside the rest; when even
      // none fit, the first model step fails naming the limit (model-step.ts fitRequest) and sends nothing.
      const fit = fitRequest(requestOf(context, [], settings.maxSteps <= 1), context, contextMaxBytes);
      if ('request' in fit && fit.kept < history.length) {
        const first = system !== null ? 1 : 0;
        context.messages = [...messages.slice(0, first), ...messages.slice(first + history.length - fit.kept)];
        context.remembered = fit.kept;
      }
      return [{ type: 'model', name: settings.model, input: context }];
    },

    toolCall(step, tool) {
      const input = step.input as ToolStepInput | null;
      if (tool.type === 'mcp') return mcpCallOf(tool, input?.function, input?.arguments ?? {});
      return applyArguments(tool, input?.arguments ?? {});
    },

    compose({ steps, timedOut }: ComposeContext): ExecutionResult {
      const end = new Date();
      const models = steps.filter((s) => s.type === 'model');
      const answered = models.filter((s) => s.finished_at && s.error === null);
      const lastAnswer = answered.at(-1)?.output as ModelAnswer | undefined;
      const usage: Usage = { promptTokens: 0, completionTokens: 0 };
      // What this run used: a step copied from the run it reruns was paid for there.
      for (const s of answered.filter((m) => !m.copied)) {
        const u = s.usage as Usage | null;
        usage.promptTokens += u?.promptTokens ?? 0;
        usage.completionTokens += u?.completionTokens ?? 0;
      }
      const output: ModelRunOutput = { text: lastAnswer?.content ?? '', steps: steps.map((s) => summaryOf(s, end)), usage };

      let error: string | null = null;
      const last = steps.at(-1);
      const failedModel = models.find((s) => s.finished_at && s.error !== null);
      if (timedOut) error = 'timed out';
      else if (failedModel) error = failedModel.error;
      else if (!last?.finished_at) error = 'the run ended before its last step finished';
      else if (last.type === 'model' && lastAnswer && lastAnswer.toolCalls.length > 0) {
        const { maxSteps } = contextOf(steps);
        error = `maxSteps (${maxSteps}) reached: the model still asked for tools (${lastAnswer.toolCalls.map((c) => c.name).join(', ')}) at its last allowed call`;
      }
      fitOutput(output);
      return { output, error: error === null ? null : capError(error) };
    },
  };
}
