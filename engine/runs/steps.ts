import { ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import { createRunStepsRepository, type RunStepRow } from '../../db/repositories/run-steps';
import { createRunsRepository, type RunRow } from '../../db/repositories/runs';
import { createToolsRepository, type ToolRow } from '../../db/repositories/tools';
import type { CallStepType, StepOutcome, StepRef } from '../contract';
import { modelBudgetMessage, overModelBudget } from '../../lib/model-settings';
import { openConfig } from '../../lib/secret-config';
import { toolSecretPaths } from '../../lib/secret-paths';
import { ModelCallAborted, ModelError } from './executor/model-client';
import { answerOf, contextOf, fitRequest, modelRequest, stepsAfter, type ModelAnswer, type ToolStepInput, type Usage } from './executor/model-step';
import { capError, capValue, MAX_STEP_OUTPUT_BYTES } from './executor/output-cap';
import { offeredFunctions } from './executor/mcp-tool';
import { callTool } from './executor/tool-call';
import type { OfferedTool } from './executor/tool-functions';
import { McpFailure } from '../../lib/mcp/client';
import { createFunctionLists } from '../../lib/mcp/functions';
import { activityContext, whileHeartbeating } from '../temporal/heartbeat';
import { fromExecutor, toRef, type EndStatus, type RunContext } from './context';
import type { RunEnd } from './end';
import { createRunDeltas } from './deltas';
import { chatAnswered, chatSpan, executeToolSpan } from '../../lib/tracing/genai';

/**
 * When the step's call was torn down by a cancellation, what the activity throws instead of recording
 * a result: the server ending the attempt (the run's time is up: it answers a heartbeat "not found" once
 * the step timed out; or a cancellation by the workflow: "cancel requested") ends the activity as
 * cancelled (the server ignores its answer); any other
 * (the worker shutting down, a lost heartbeat) is retried, and the call made again: it never returned.
 */
export function interruption(): Error | undefined {
  const ctx = activityContext();
  if (!ctx?.cancellationSignal.aborted) return undefined;
  const details = ctx.cancellationDetails;
  if (details?.cancelRequested || details?.notFound) return new CancelledFailure('the step was ended by the server: the run timed out or was cancelled');
  return ApplicationFailure.retryable('the step was interrupted before its call returned', 'StepInterrupted');
}

/** A run's steps: each tool or model step made at most once, recorded with the steps its answer adds. */
export function createRunSteps({ deps, executors }: RunContext, runEnd: RunEnd) {
  const { db, config } = deps;
  const toolsRepository = createToolsRepository(db);
  const runs = createRunsRepository(db);
  const runSteps = createRunStepsRepository(db);
  const { finishFrom } = runEnd;
  const mcpLists = createFunctionLists(() => config.tools.mcpListTtl.ms);
  const deltas = createRunDeltas(db);

  /** A tool of the account, its secrets opened; null when it is gone. */
  async function openedTool(accountId: string, id: string): Promise<ToolRow | null> {
    const tool = await toolsRepository.findById(accountId, id);
    return tool && { ...tool, config_json: openConfig(tool.config_json, toolSecretPaths(tool.type, tool.config_json), deps.secrets) };
  }

  /**
   * The functions a model step offers: the planned ones, and the functions the run's MCP tools list now
   * (executor/mcp-tool.ts), asked with no database connection held; or why they can't be listed.
   */
  async function offeredNow(run: Pick<RunRow, 'account_id'>, steps: RunStepRow[]): Promise<{ tools: OfferedTool[] } | { error: string }> {
    const context = fromExecutor('read the run context', () => contextOf(steps));
    try {
      const options = { timeoutMs: config.tools.timeoutMs, allowPrivate: config.webhooks.allowPrivateTargets, dnsServers: config.network.dnsServers, accountId: null };
      const tools = await whileHeartbeating((signal) =>
        offeredFunctions(context.tools, context.mcpTools, { tool: (id) => openedTool(run.account_id, id), lists: mcpLists, options: { ...options, signal } }),
      );
      return { tools };
    } catch (err) {
      const interrupted = interruption();
      if (interrupted) throw interrupted;
      if (err instanceof McpFailure) return { error: err.message };
      throw err;
    }
  }

  /** The call a tool step makes (its tool, secrets opened, and input); or why it can't be made (recorded as the step's error). */
  async function toolCallOf(
    run: Pick<RunRow, 'account_id' | 'executor' | 'input'>,
    step: RunStepRow,
  ): Promise<{ tool: ToolRow; input: unknown } | { error: string }> {
    if (!step.tool_id) return { error: `the model called "${step.name}", which is not one of the tools it was offered` };
    const tool = await toolsRepository.findById(run.account_id, step.tool_id);
    if (!tool) return { error: 'the tool was deleted before this step ran' };
    let opened: ToolRow;
    try {
      opened = { ...tool, config_json: openConfig(tool.config_json, toolSecretPaths(tool.type, tool.config_json), deps.secrets) };
    } catch (err) {
      return { error: `the tool's configuration could not be read: ${(err as Error).message}` };
    }
    return executors.get(run.executor ?? 'tools').toolCall(step, opened, run.input);
  }

  /**
   * Records a finished step (once, while its run is running) with the steps its answer adds, in one
   * statement: a retry finds both or neither. Answers the step's outcome, or 'stopped' when the run
   * ended meanwhile.
   */
  async function recordStep(
    runId: string,
    step: RunStepRow,
    r: { output: unknown; error: string | null; usage?: Usage; startedAt: Date; next?: ReturnType<typeof stepsAfter> },
    /** The run, when this step was its last planned one: a step that adds none then ends the run (lastStepEnds). */
    last?: { run: Pick<RunRow, 'id' | 'executor' | 'input'>; steps: () => Promise<RunStepRow[]> },
  ): Promise<StepOutcome> {
    const recorded = await runSteps.finishRunStep(
      runId,
      step.step_index,
      {
        output: capValue(r.output, MAX_STEP_OUTPUT_BYTES),
        error: r.error === null ? null : capError(r.error),
        usage: r.usage,
        startedAt: r.startedAt,
        finishedAt: new Date(),
      },
      r.next,
    );
    if (recorded) {
      const outcome: StepOutcome = { status: 'done', ok: recorded.step.error === null, ...(recorded.added.length ? { next: recorded.added.map(toRef) } : {}) };
      if (!last || recorded.added.length > 0) return outcome;
      return { ...outcome, ...(await lastStepEnds(last.run, recorded.step, last.steps)) };
    }
    // Not recorded: another attempt recorded it first, or the run ended meanwhile.
    return answered(runId, step.step_index);
  }

  /**
   * The run's last step, recorded and adding none, ends the run here (finishRun's work, the run not
   * timed out: this step finished within its time), saving the workflow its finishRun: the outcome says
   * `ended` and the workflow returns it. Steps are made in index order, so a step with no index after
   * it is the last. Anything failing here is left to finishRun, which the workflow then calls as before
   * (an activity retry finds the step finished and answers without `ended`).
   */
  async function lastStepEnds(run: Pick<RunRow, 'id' | 'executor' | 'input'>, step: RunStepRow, steps: () => Promise<RunStepRow[]>): Promise<{ ended?: EndStatus }> {
    try {
      const all = (await steps()).map((s) => (s.step_index === step.step_index ? step : s));
      const { status } = await finishFrom(run, all, false);
      return status === 'succeeded' || status === 'failed' ? { ended: status } : {};
    } catch {
      return {};
    }
  }

  /** A finished step's outcome as it was recorded, with the steps it added; 'stopped' when it is not finished. */
  async function answered(runId: string, index: number): Promise<StepOutcome> {
    const step = await runSteps.findRunStep(runId, index);
    if (!step?.finished_at) return { status: 'stopped' };
    const next = (await runSteps.listStepsPlannedBy(runId, index)).map(toRef);
    return { status: 'done', ok: step.error === null, ...(next.length ? { next } : {}) };
  }

  /**
   * One tool step, made at most once: a step that finished answers what it recorded and is never
   * made again (a retry after a crash, a replay). Heartbeats while the call runs, so a step timed out by
   * the server (the run's time is up) or a dead worker is noticed within the heartbeat timeout; the
   * call's request is torn down when the activity is cancelled. The tool's own failure is the step's result, not
   * the activity's; a run no longer running makes no call ('stopped'), and a result that comes back
   * after the run ended is not recorded.
   */
  async function toolStep(ref: StepRef): Promise<StepOutcome> {
    const startedAt = new Date();
    const found = await runSteps.startStepOfRun(ref.runId, ref.index, startedAt);
    if (!found) {
      const run = await runs.findRun(ref.runId);
      if (!run || run.status !== 'running') return { status: 'stopped' };
      throw ApplicationFailure.nonRetryable(`run ${ref.runId} has no step ${ref.index}`, 'StepNotPlanned');
    }
    const { step, run, lastIndex } = found;
    if (run.status !== 'running') return { status: 'stopped' };
    if (step.finished_at) return answered(ref.runId, step.step_index);

    let output: unknown = null;
    let error: string | null = null;
    const call = await toolCallOf(run, step);
    if ('error' in call) error = call.error;
    else {
      // `execute_tool <function>` (lib/tracing/genai.ts): the function the model called, with its call id.
      const called = step.input as Partial<ToolStepInput> | null;
      try {
        output = await executeToolSpan({ name: step.name, callId: called?.callId }, async (span) => {
          span.content(() => ({ 'gen_ai.tool.call.arguments': JSON.stringify(called?.arguments ?? call.input ?? null) }));
          const result = await whileHeartbeating((signal) => callTool(call.tool, call.input, config, signal));
          span.content(() => ({ 'gen_ai.tool.call.result': JSON.stringify(result ?? null) }));
          return result;
        });
      } catch (err) {
        const interrupted = interruption();
        if (interrupted) throw interrupted;
        error = (err as Error).message;
      }
    }
    const last = lastIndex === step.step_index ? { run: { id: ref.runId, executor: run.executor, input: run.input }, steps: () => runSteps.listRunSteps(ref.runId) } : undefined;
    return await recordStep(ref.runId, step, { output, error, startedAt }, last);
  }

  /**
   * One model step, made at most once like a tool step: it sends the run's conversation so far to the
   * model (model-step.ts) and records the answer together with the steps it adds (a tool step per tool
   * call and the model step after them), so a retry after a crash answers the same steps and the model
   * is not asked again. The provider's 429, 5xx and timeouts are retried inside the call with backoff
   * (model-client.ts); a refusal (4xx), or a provider still failing after its retries, is the step's
   * error and fails the run with the provider's message (never the key).
   */
  async function modelStep(ref: StepRef): Promise<StepOutcome> {
    const startedAt = new Date();
    const found = await runSteps.startStepInRun(ref.runId, ref.index, startedAt);
    if (!found || found.run.status !== 'running') return { status: 'stopped' };
    const { run, steps } = found;
    const step = steps.find((st) => st.step_index === ref.index);
    if (!step) throw ApplicationFailure.nonRetryable(`run ${ref.runId} has no step ${ref.index}`, 'StepNotPlanned');
    if (step.finished_at) return answered(run.id, step.step_index);

    const offered = await offeredNow(run, steps);
    // Within MODEL_CONTEXT_MAX_BYTES: the oldest remembered messages left out, or not sent at all.
    const fit = 'error' in offered ? offered : fromExecutor('compose the model request', () => fitRequest(modelRequest(steps, step.step_index, offered.tools), contextOf(steps), config.model.contextMaxBytes));
    let answer: ModelAnswer | null = null;
    let usage: Usage | undefined;
    let error: string | null = null;
    if (!executors.model) error = 'no model provider is configured (MODEL_BASE_URL is not set on the worker)';
    else if ('error' in fit) error = fit.error;
    // MODEL_TOKENS_PER_DAY, checked before every call (the step that crosses it is counted in full: a call's tokens are known after it).
    else if (overModelBudget(run.tokensToday, config.model.tokensPerDay)) error = modelBudgetMessage(config.model.tokensPerDay);
    else {
      const model = executors.model;
      const { request } = fit;
      // The answer's text told to the run's live streams as it arrives (deltas.ts), all of it before the step is recorded.
      const text = deltas.forStep(run.id, step.step_index);
      try {
        // `chat <model>` (lib/tracing/genai.ts), with the answer's model and token usage.
        const result = await chatSpan(request, config.model.baseUrl, async (span) => {
          const completion = await whileHeartbeating((signal) => model.complete(request, signal, (piece) => text.text(piece)));
          await text.flush();
          chatAnswered(span, completion);
          const read = answerOf(completion);
          if ('error' in read) span.fail('invalid_answer', read.error);
          return read;
        });
        if ('error' in result) error = result.error;
        else ({ answer, usage } = result);
      } catch (err) {
        const interrupted = interruption();
        if (interrupted) throw interrupted;
        if (err instanceof ModelCallAborted) throw ApplicationFailure.retryable(err.message, 'StepInterrupted');
        if (!(err instanceof ModelError)) throw err;
        error = err.message;
      }
    }
    const next = answer && !('error' in offered) ? stepsAfter(steps, step.step_index, answer, offered.tools) : [];
    const isLast = steps.at(-1)?.step_index === step.step_index;
    const last = isLast ? { run, steps: async () => steps } : undefined;
    return await recordStep(run.id, step, { output: answer, error, usage, startedAt, next }, last);
  }

  /** The activity body that makes each type of step. */
  const stepOf: Record<CallStepType, (ref: StepRef) => Promise<StepOutcome>> = { tool: toolStep, model: modelStep };

  return { stepOf, toolStep, modelStep };
}
