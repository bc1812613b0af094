import { ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import { withTransaction, type Queryable } from '../../db/pool';
import { createAgentsRepository } from '../../db/repositories/agents';
import { insertEvent } from '../../db/repositories/events';
import {
  findRunStep,
  finishRunStep,
  listRunSteps,
  listStepsPlannedBy,
  markRunRunningWithSteps,
  startStepInRun,
  startStepOfRun,
  type NewRunStep,
  type RunStepRow,
} from '../../db/repositories/run-steps';
import {
  countQueuedAhead,
  countRunningRuns,
  findRun,
  findRunForUpdateWithAgent,
  findRunInLine,
  markRunWaiting,
  nextQueuedRuns,
  recordRunEnd,
  type RunExecutor,
  type RunRow,
} from '../../db/repositories/runs';
import { insertThreadMessages, listThreadWindow, type ThreadMessageRow } from '../../db/repositories/thread-messages';
import { createToolsRepository, type ToolRow } from '../../db/repositories/tools';
import { openConfig } from '../../lib/secret-config';
import { toolSecretPaths } from '../../lib/secret-paths';
import { workflowIds } from '../../engine/temporal/names';
import { RUN_SLOT_FREED_SIGNAL, type BeginRunOutcome, type BegunRun, type RunInput, type RunOutcome, type StepOutcome, type StepRef, type StepType } from '../../engine/contract';
import type { ActivityDeps } from '../deps';
import { activityContext, whileHeartbeating } from '../heartbeat';
import { ModelCallAborted, ModelError } from '../executor/model-client';
import type { ModelRunOutput } from '../executor/model-executor';
import { answerOf, contextOf, fitRequest, modelRequest, stepsAfter, type ModelAnswer, type Usage } from '../executor/model-step';
import { modelBudgetMessage, overModelBudget } from '../../lib/model-settings';
import { QUEUE_PLACE_MS, QUEUE_RECHECK_MS, runLineLimits } from '../../engine/runs/run-line';
import { capError, capValue, MAX_RUN_OUTPUT_BYTES, MAX_STEP_OUTPUT_BYTES } from '../executor/output-cap';
import { createExecutors, type Executors } from '../executor/select';
import { userMessage } from '../executor/system-message';
import { callTool } from '../executor/tool-call';

type EndStatus = 'succeeded' | 'failed';

/**
 * When the step's call was torn down by a cancellation, what the activity throws instead of recording
 * a result: the server ending the attempt (the run's time is up: it answers a heartbeat "not found" once
 * the step timed out; or a cancellation by the workflow: "cancel requested") ends the activity as
 * cancelled (the server ignores its answer); any other
 * (the worker shutting down, a lost heartbeat) is retried, and the call made again: it never returned.
 */
function interruption(): Error | undefined {
  const ctx = activityContext();
  if (!ctx?.cancellationSignal.aborted) return undefined;
  const details = ctx.cancellationDetails;
  if (details?.cancelRequested || details?.notFound) return new CancelledFailure('the step was ended by the server: the run timed out or was cancelled');
  return ApplicationFailure.retryable('the step was interrupted before its call returned', 'StepInterrupted');
}

/**
 * A failure no retry can fix is not retried (the workflow then fails the run with its message):
 * SQLSTATE data exceptions (22), integrity violations (23) and syntax or access errors (42).
 */
function classified(err: unknown): unknown {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && /^(22|23|42)/.test(code)) {
    return ApplicationFailure.nonRetryable(`database error ${code}: ${(err as Error).message}`, 'DeterministicDatabaseError');
  }
  return err;
}

/** An executor's own error (a bad agent configuration, a bug) fails the run; retrying would change nothing. */
function fromExecutor<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw ApplicationFailure.nonRetryable(`the executor could not ${what}: ${(err as Error).message}`, 'ExecutorError');
  }
}

const toRef = (s: RunStepRow): StepRef => ({ runId: s.run_id, index: s.step_index, type: s.type });

/**
 * The activities of `runAgentWorkflow` (workflows/run.ts): beginRunStep (the run begun and its first step
 * made; beginRun in runs from before, without the step), one runToolStep per further tool step and one
 * runModelStep per further model step, finishRun, and failRun when one of them failed for good.
 */
export function createRunActivities(deps: ActivityDeps, executors: Executors = createExecutors(deps.config)) {
  const { db, handOff, client, config } = deps;
  const agents = createAgentsRepository(db);
  const toolsRepository = createToolsRepository(db);
  const { limit, holdMs } = runLineLimits(config);
  const { runLine } = deps;
  // A run's end event: its deliveries start their workflows at once (engine/compose.ts).
  const fanOut = deps.fanOutToWorkflows;

  /**
   * queued/running → succeeded/failed and agent.completed / agent.failed, in the caller's transaction;
   * null when already ended. A model run that succeeded in a thread adds its exchange to the thread: the
   * user's message (as of the run's creation) and the model's answer.
   */
  async function end(tx: Queryable, runId: string, status: EndStatus, output: unknown, error: string | null): Promise<{ row: RunRow; queued: boolean } | null> {
    const row = await recordRunEnd(tx, runId, { status, output, error: error === null ? null : capError(error) });
    if (!row) return null;
    if (status === 'succeeded' && row.thread_id && row.executor === 'model') {
      const user = userMessage(row.input);
      await insertThreadMessages(tx, {
        accountId: row.account_id,
        agentId: row.agent_id,
        threadId: row.thread_id,
        runId: row.id,
        messages: [
          ...(user !== null ? [{ role: 'user' as const, content: user, createdAt: row.created_at }] : []),
          { role: 'assistant' as const, content: (row.output as ModelRunOutput).text },
        ],
      });
    }
    const base = { agentId: row.agent_id, runId: row.id };
    const event = await insertEvent(tx, {
      accountId: row.account_id,
      type: status === 'succeeded' ? 'agent.completed' : 'agent.failed',
      data: status === 'succeeded' ? { ...base, output: row.output, chainDepth: row.chain_depth } : { ...base, error: row.error, chainDepth: row.chain_depth },
      chainDepth: row.chain_depth,
    });
    const fannedOut = await fanOut.fanOutEvent(tx, event, { agentId: row.agent_id, triggerId: row.trigger_id });
    // Whether the fan-out queued workflow starts (its deliveries, fires or matching) for the hand-off.
    return { row, queued: fannedOut.deliveries > 0 || fannedOut.fires > 0 || fannedOut.deferred };
  }

  /** Accounts whose line is being woken (true: asked again meanwhile). */
  const waking = new Map<string, boolean>();

  /**
   * After a run of the account ended: what its event queued (`queued`: deliveries, fires) is handed off at once; then, in the background, the
   * oldest parked runs get a workflow for the free slots (engine/runs/run-line.ts) and the runs with a workflow
   * first in line for them are woken (a signal to `run:<id>`; one that can't be delivered is left to the
   * run's own recheck). In the background so that the run's own workflow task does not wait for its
   * account's line (a flood of one account's ends would otherwise hold the worker's workflow task
   * slots that other accounts' runs need); one wake per account at a time, a request meanwhile makes it
   * go round once more. Lost with the process, it is done by the reconciler's next round (parked runs)
   * or the runs' own recheck (waiting ones).
   */
  function afterEnd(accountId: string, queued: boolean): void {
    if (queued) handOff.kick(); // most ends queue nothing (no webhook, no trigger listening): no outbox round
    if (waking.has(accountId)) {
      waking.set(accountId, true);
      return;
    }
    waking.set(accountId, false);
    void (async () => {
      try {
        do {
          waking.set(accountId, false);
          await wakeLine(accountId);
        } while (waking.get(accountId));
      } catch {
        // Covered by the reconciler's round and the runs' recheck (above).
      } finally {
        waking.delete(accountId);
      }
    })();
  }
  async function wakeLine(accountId: string): Promise<void> {
    if ((await runLine.promote(accountId)) > 0) handOff.kick();
    // Most runs end with nobody waiting: one read of the line, and the running runs counted only when it is not empty.
    const waiting = await nextQueuedRuns(db, accountId, QUEUE_PLACE_MS, limit);
    if (waiting.length === 0) return;
    const free = limit - (await countRunningRuns(db, accountId, holdMs));
    if (free <= 0) return;
    await Promise.all(waiting.slice(0, free).map((id) => client.workflow.getHandle(workflowIds.run(id)).signal(RUN_SLOT_FREED_SIGNAL).catch(() => {})));
  }

  /**
   * Ends the run from its steps (the executor composes the output; the engine keeps it within 256 KiB):
   * succeeded or failed by the executor's rule, or failed with `timed out` when the run's time ran out.
   */
  function finishFrom(run: Pick<RunRow, 'id' | 'executor' | 'input'>, steps: RunStepRow[], timedOut: boolean): Promise<RunOutcome> {
    const executor = executors.get(run.executor ?? 'tools');
    const result = fromExecutor('compose the output', () => executor.compose({ input: run.input, steps, timedOut }));
    const output = capValue(result.output, MAX_RUN_OUTPUT_BYTES);
    return settle(run.id, result.error === null ? 'succeeded' : 'failed', output, result.error);
  }

  /** Ends the run in its own transaction (once) and wakes the next in line; answers the run's status. */
  async function settle(runId: string, status: EndStatus, output: unknown, error: string | null): Promise<RunOutcome> {
    const ended = await withTransaction(db, (tx) => end(tx, runId, status, output, error));
    if (!ended) {
      const current = await findRun(db, runId);
      return { status: current ? current.status : 'gone' };
    }
    afterEnd(ended.row.account_id, ended.queued);
    return { status };
  }

  /**
   * The answer for a run already running (a retry whose answer was lost): the time it has left, and the
   * steps planned when it began (`planned_by` null). The steps a step's answer added are not listed: the
   * step answers them (`answered`) when it is asked again, so the workflow's queue holds each step once,
   * in the order it had the first time.
   */
  async function runningOutcome(q: Queryable, run: Pick<RunRow, 'id' | 'started_at'>): Promise<BeginRunOutcome & { status: 'running' }> {
    const steps = await listRunSteps(q, run.id);
    return { status: 'running', timeoutMs: timeLeft(run.started_at), steps: steps.filter((s) => s.planned_by === null).map(toRef) };
  }

  /** The run's time left (RUN_TIMEOUT_MS from the moment it started running). */
  function timeLeft(startedAt: Date | null): number {
    const { timeoutMs } = config.runs;
    const elapsed = startedAt ? Date.now() - startedAt.getTime() : 0;
    return Math.min(timeoutMs, Math.max(0, timeoutMs - elapsed));
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
    const recorded = await finishRunStep(
      db,
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
    const step = await findRunStep(db, runId, index);
    if (!step?.finished_at) return { status: 'stopped' };
    const next = (await listStepsPlannedBy(db, runId, index)).map(toRef);
    return { status: 'done', ok: step.error === null, ...(next.length ? { next } : {}) };
  }

  /** Which executor runs the agent, and the steps it plans for this run (reads only). */
  async function planOf(q: Queryable, run: RunRow): Promise<{ kind: RunExecutor; steps: NewRunStep[] }> {
    const agent = await agents.findById(run.account_id, run.agent_id, q);
    if (!agent) return { kind: 'tools', steps: [] }; // deleted: the locked read says 'gone'
    const kind = executors.kindFor(agent);
    const tools = await toolsRepository.listEnabledForAgent(agent.id, q);
    const memory = agent.memory_config;
    const history: ThreadMessageRow[] =
      kind === 'model' && run.thread_id && memory.type !== 'none'
        ? await listThreadWindow(q, {
            agentId: agent.id,
            threadId: run.thread_id,
            maxMessages: memory.maxMessages,
            ttlMinutes: memory.ttlMinutes,
            maxBytes: config.model.contextMaxBytes,
          })
        : [];
    return { kind, steps: fromExecutor('plan the run', () => executors.get(kind).plan({ agent, tools, input: run.input, history })) };
  }

  /**
   * queued → running when the account has a free slot and this run is first in line for it (created
   * order; see QUEUE_PLACE_MS), planning its steps in the same transaction; else 'queued' (checked
   * in). Decisions of one account are serialised by its advisory lock. A run of an agent paused or
   * turned into a template while the run was queued does not start: it fails (agent.failed) with an
   * error naming the status. A retry of an attempt whose answer was lost finds the run running and
   * answers the same plan.
   */
  async function begin(input: RunInput): Promise<BeginRunOutcome> {
    // The run with a look at its account's line (read without the lock: the locked decision is the one that counts).
    const inLine = await findRunInLine(db, input.runId, { placeMs: QUEUE_PLACE_MS, holdMs, cap: limit });
    if (!inLine) return { status: 'gone' }; // its agent was deleted
    const first = inLine.run;
    if (first.status === 'succeeded' || first.status === 'failed') return { status: first.status };
    // The plan is made before the account's lock is taken (reads of the agent, its tools and its
    // thread), when a slot looks free: the lock is held only for the slot decision and its writes.
    const slotLooksFree = inLine.running + inLine.ahead < limit;
    const plan = first.status === 'queued' && slotLooksFree ? await planOf(db, first) : null;
    /** The decision, under the account's lock: shared when every open run of the account fits in its slots (`allFit`: no one waits, nothing to count), else exclusive. */
    const decide = async (tx: Queryable, allFit: boolean): Promise<{ outcome: BeginRunOutcome; ended?: { queued: boolean } }> => {
      const found = await findRunForUpdateWithAgent(tx, input.runId);
      if (!found) return { outcome: { status: 'gone' } };
      const { run, agentStatus } = found;
      if (run.status === 'succeeded' || run.status === 'failed') return { outcome: { status: run.status } };
      if (run.status === 'running') return { outcome: await runningOutcome(tx, run) };

      if (agentStatus === null) return { outcome: { status: 'gone' } };
      if (agentStatus === 'paused' || agentStatus === 'template') {
        const ended = await end(tx, run.id, 'failed', null, `Agent is ${agentStatus}: the run did not start (it was queued when the agent became ${agentStatus})`);
        return { outcome: { status: 'failed' }, ended: { queued: ended?.queued ?? false } };
      }

      if (!allFit) {
        const running = await countRunningRuns(tx, run.account_id, holdMs);
        const ahead = running < limit ? await countQueuedAhead(tx, run, QUEUE_PLACE_MS, limit) : 0;
        if (running + ahead >= limit) {
          await markRunWaiting(tx, run.id);
          return { outcome: { status: 'queued', recheckMs: QUEUE_RECHECK_MS } };
        }
      }
      const { kind, steps } = plan ?? (await planOf(tx, run));
      const planned = await markRunRunningWithSteps(tx, run.id, kind, steps);
      return { outcome: { status: 'running', timeoutMs: config.runs.timeoutMs, steps: planned.map(toRef) } };
    };
    const result =
      (first.status === 'queued' ? await runLine.whenAllFit(first.account_id, (tx) => decide(tx, true)) : null) ??
      (await runLine.locked(first.account_id, (tx) => decide(tx, false)));
    if (result.ended) afterEnd(first.account_id, result.ended.queued);
    return result.outcome;
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
    const found = await startStepOfRun(db, ref.runId, ref.index, startedAt);
    if (!found) {
      const run = await findRun(db, ref.runId);
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
      try {
        output = await whileHeartbeating((signal) => callTool(call.tool, call.input, config, signal));
      } catch (err) {
        const interrupted = interruption();
        if (interrupted) throw interrupted;
        error = (err as Error).message;
      }
    }
    const last = lastIndex === step.step_index ? { run: { id: ref.runId, executor: run.executor, input: run.input }, steps: () => listRunSteps(db, ref.runId) } : undefined;
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
    const found = await startStepInRun(db, ref.runId, ref.index, startedAt);
    if (!found || found.run.status !== 'running') return { status: 'stopped' };
    const { run, steps } = found;
    const step = steps.find((st) => st.step_index === ref.index);
    if (!step) throw ApplicationFailure.nonRetryable(`run ${ref.runId} has no step ${ref.index}`, 'StepNotPlanned');
    if (step.finished_at) return answered(run.id, step.step_index);

    // Within MODEL_CONTEXT_MAX_BYTES: the oldest remembered messages left out, or not sent at all.
    const fit = fromExecutor('compose the model request', () => fitRequest(modelRequest(steps, step.step_index), contextOf(steps), config.model.contextMaxBytes));
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
      try {
        const result = answerOf(await whileHeartbeating((signal) => model.complete(request, signal)));
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
    const next = answer ? stepsAfter(steps, step.step_index, answer) : [];
    const isLast = steps.at(-1)?.step_index === step.step_index;
    const last = isLast ? { run, steps: async () => steps } : undefined;
    return await recordStep(run.id, step, { output: answer, error, usage, startedAt, next }, last);
  }

  /** The activity body that makes each type of step. */
  const stepOf: Record<StepType, (ref: StepRef) => Promise<StepOutcome>> = { tool: toolStep, model: modelStep };

  return {
    /** queued → running when a slot is free, its steps planned (`begin`); the path of runs started before BEGUN_BY_FIRST_STEP (workflows/run.ts). */
    async beginRun(input: RunInput): Promise<BeginRunOutcome> {
      try {
        return await begin(input);
      } catch (err) {
        throw classified(err);
      }
    },

    /**
     * beginRun and the run's first step in one activity (workflows/run.ts BEGUN_BY_FIRST_STEP): the same
     * slot decision and plan (`begin`), heartbeating while it waits for its account's turn; then, when
     * the run is running with time left, its first planned step, made as runToolStep / runModelStep
     * makes it (heartbeating, torn down when the server ends the attempt, recorded once). The answer:
     * `begun` as beginRun's, its steps the planned ones after the first, and `first`, that step's
     * outcome with the steps it added (`next`). A retry after the first step was recorded finds the
     * run running and the step finished: it answers what the step recorded and makes no call again, and
     * lists only the planned steps (`runningOutcome`), so the workflow's queue holds each step once. A
     * run with no step (an agent with no tools) answers `begun` alone, and so does a run whose time is up.
     */
    async beginRunStep(input: RunInput): Promise<BegunRun> {
      try {
        const askedAt = Date.now();
        const begun = await whileHeartbeating(() => begin(input));
        if (begun.status !== 'running') return { begun };
        const [first, ...rest] = begun.steps;
        if (!first || begun.timeoutMs <= 0) return { begun };
        const interrupted = interruption();
        if (interrupted) throw interrupted;
        const outcome = await stepOf[first.type](first);
        // The time left as of this answer (counted from before the slot decision: never more than the run has).
        return { begun: { status: 'running', timeoutMs: Math.max(0, begun.timeoutMs - (Date.now() - askedAt)), steps: rest }, first: outcome };
      } catch (err) {
        throw classified(err);
      }
    },

    /** A tool step (`toolStep`). */
    async runToolStep(ref: StepRef): Promise<StepOutcome> {
      try {
        return await toolStep(ref);
      } catch (err) {
        throw classified(err);
      }
    },

    /** A model step (`modelStep`). */
    async runModelStep(ref: StepRef): Promise<StepOutcome> {
      try {
        return await modelStep(ref);
      } catch (err) {
        throw classified(err);
      }
    },

    /**
     * Ends the run from its steps (the executor composes the output; the engine keeps it within
     * 256 KiB): succeeded or failed by the executor's rule, or failed with `timed out` when the run's
     * time ran out. Emits agent.completed / agent.failed once, in the same transaction; a retry after
     * the end committed changes nothing and emits nothing again.
     */
    async finishRun(input: RunInput & { timedOut?: boolean }): Promise<RunOutcome> {
      try {
        const run = await findRun(db, input.runId);
        if (!run) return { status: 'gone' };
        if (run.status === 'succeeded' || run.status === 'failed') return { status: run.status };
        return await finishFrom(run, await listRunSteps(db, run.id), input.timedOut ?? false);
      } catch (err) {
        throw classified(err);
      }
    },

    /**
     * The run workflow's last word when another activity failed for good (every attempt, or a failure
     * no retry fixes): the run is failed with that error and agent.failed emitted, instead of staying
     * queued or running forever. Composes nothing: whatever failed may fail again.
     */
    async failRun(input: RunInput & { error: string }): Promise<RunOutcome> {
      return settle(input.runId, 'failed', null, input.error);
    },
  };
}
