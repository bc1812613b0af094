import {
  ActivityFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineSignal,
  deprecatePatch,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { inAgentSpan, type AgentSpan } from './agent-span';
import { awaitApproval } from './approval-wait';
import { RUN_CANCELLED_ERROR, RUN_SLOT_FREED_SIGNAL, type BeginRunOutcome, type BegunRun, type RunInput, type RunOutcome, type StepOutcome, type StepRef, type CallStepType } from '../engine/contract';

export const runSlotFreed = defineSignal(RUN_SLOT_FREED_SIGNAL);

/** A run waiting for days asks for a slot thousands of times: its history starts afresh now and then. */
const ASKS_PER_HISTORY = 500;

/** Database work of the run (finish, fail): quick, retried with backoff for a few minutes, then given up. */
const BOOKKEEPING = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
} as const;
const remoteBookkeeping = proxyActivities<Activities>(BOOKKEEPING);
/**
 * The bookkeeping activities run as local activities: in the workflow's own task, recorded with its
 * completion, so a run costs the server one activity task per step and nothing more (one hop per effect;
 * bench/runs.ts). Each is idempotent (a retry after a crash finds what it wrote).
 */
const localBookkeeping = proxyLocalActivities<Activities>(BOOKKEEPING);
// A run whose time ran out is finished by an activity task: the cancellation of its step in flight goes
// out with the workflow task that schedules it, so the step's call is torn down before the run ends (a
// local activity would hold that workflow task, and the cancellation, until it is done).
const finishRun = (input: RunInput & { timedOut?: boolean }) => (input.timedOut ? remoteBookkeeping : localBookkeeping).finishRun(input);
const failRun = (input: RunInput & { error: string }) => localBookkeeping.failRun(input);

/**
 * Runs begin in their first step's activity (beginWithFirstStep). Runs from before began with a local
 * beginRun, behind `patched` of this id; that path is deleted, and the call that stays is the patch's
 * deprecation: stage 2 of three (docs/architecture.md § Retiring workflow patches), so histories recorded
 * by the workers of stage 1 (test/workflows/histories/) replay here, and a stage-1 worker replays ours.
 * The three patches before it (`run-bookkeeping-local`, `run-deadline-on-steps`, `run-finished-by-last-step`)
 * were never asked for by runs that took this path, so no history of an open run holds their markers:
 * their old code is gone and their ids need no call.
 */
const BEGUN_BY_FIRST_STEP_PATCH = 'run-begun-by-first-step';

/**
 * The time limit of a run whose input has none (`timeoutMs`: written by engine/outbox/starts.ts since
 * stage 1; an input written before can only come back through continue-as-new of a run queued since
 * then): the most RUN_TIMEOUT_MS can be (lib/config.ts). The run's own time, which beginRunStep answers,
 * bounds its steps all the same.
 */
const TIME_LIMIT_OF_AN_OLD_INPUT_MS = 86_400_000;

/**
 * A step heartbeats while its call runs: a dead worker, or the run's time running out, is noticed within
 * the heartbeat timeout, not at the end of the run.
 */
const STEP_HEARTBEAT = '5 seconds';
const STEP_RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 } as const;

/**
 * The activity that makes each type of step, within the run's time left as its schedule-to-close: each
 * step, retries included, must close within it, so the server times out the step in flight when the time
 * runs out (its call is torn down: the activity's next heartbeat is answered "not found",
 * engine/runs/steps.ts `interruption`). No timer and no cancellation scope per run.
 */
function stepActivities(scheduleToCloseTimeout: number): Record<CallStepType, (ref: StepRef) => Promise<StepOutcome>> {
  const { runToolStep, runModelStep } = proxyActivities<Activities>({ scheduleToCloseTimeout, heartbeatTimeout: STEP_HEARTBEAT, retry: STEP_RETRY });
  return { tool: runToolStep, model: runModelStep };
}

/**
 * Workflow time: in the workflow sandbox `Date.now()` is the start time of the workflow task being
 * processed, taken from the history, so it is the same on replay (deterministic; not the machine's clock,
 * which the lint rule bars). Used only here, for the run's deadline.
 */
// eslint-disable-next-line no-restricted-properties -- workflow time, deterministic (see above)
const workflowNow = (): number => Date.now();

/** A step that failed because the run's time ran out: in flight (schedule-to-close), or before its next retry. */
function ranOutOfTime(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  if (err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_CLOSE') return true;
  return err.retryState === 'TIMEOUT';
}

/** How the run's steps went: `timedOut` when its time ran out first; `ended` when its last step ended it; else (`status`) it was not to be executed. */
type Made = { timedOut: boolean; ended?: 'succeeded' | 'failed' } | { status: 'succeeded' | 'failed' | 'gone' };

/**
 * One agent run, id `run:<runId>` (docs/architecture.md § When a run is started):
 * 1. beginRunStep: waits for a slot of its account (RUN_CONCURRENCY_PER_ACCOUNT, in created order) — woken
 *    by the `runSlotFreed` signal when a run of the account ends, or rechecking at a slow interval —
 *    then the run is running, its steps are planned, and its first step is made, in the same activity;
 * 2. one activity per further step, in order, each made at most once (a step that finished is never made
 *    again when the run resumes after a crash), all within the run's time limit (RUN_TIMEOUT_MS from the
 *    moment it started running): each step's schedule-to-close timeout is the time left, so when it
 *    runs out the server times out the step in flight;
 * 3. finishRun: the output composed from the steps, agent.completed / agent.failed (which chains
 *    further runs), and the next runs in line woken — done by the last step itself when it adds none.
 * An activity failing for good fails the run (failRun), and so does cancelling the workflow: a run is
 * never left queued or running.
 */
export async function runAgentWorkflow(input: RunInput): Promise<RunOutcome> {
  deprecatePatch(BEGUN_BY_FIRST_STEP_PATCH);
  // The run as one `invoke_agent` span around its steps (agent-span.ts; no command: the history is the same).
  return inAgentSpan(input.runId, (span) => runAgent(input, span));
}

async function runAgent(input: RunInput, span: AgentSpan): Promise<RunOutcome> {
  try {
    const made = await beginWithFirstStep(input, input.timeoutMs ?? TIME_LIMIT_OF_AN_OLD_INPUT_MS, span);
    if ('status' in made) return { status: made.status };
    if (made.ended) return { status: made.ended };
    return await finishRun({ ...input, timedOut: made.timedOut });
  } catch (err) {
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) {
      // The workflow itself was cancelled (an operator): the run fails rather than stay running.
      await CancellationScope.nonCancellable(() => failRun({ ...input, error: RUN_CANCELLED_ERROR }));
      throw err;
    }
    // Every attempt failed (e.g. the database was down throughout), or a failure no retry can fix.
    if (!(err instanceof ActivityFailure)) throw err;
    return failRun({ ...input, error: `the run could not be executed: ${err.cause?.message ?? err.message}` });
  }
}

/**
 * beginRunStep (engine/runs/index.ts: the slot decision and plan, then the run's first step, in one
 * activity task — no local activity before the first step) within the run's time limit, waiting for a
 * slot; then the steps after its first — the planned ones, then those the first added — by the deadline
 * counted from when beginRunStep was scheduled (or the run's own time left, if less: a run that was
 * already running). Its time running out inside beginRunStep times the run out as a step's does.
 */
async function beginWithFirstStep(input: RunInput, timeoutMs: number, span: AgentSpan): Promise<Made> {
  // Retried as the run's bookkeeping is (its database work must outlast a short outage of the database:
  // the run is not failed for that), and as a step is, never making a call twice: a step that finished
  // answers what it recorded; all within the run's time.
  const { beginRunStep } = proxyActivities<Activities>({ scheduleToCloseTimeout: timeoutMs, heartbeatTimeout: STEP_HEARTBEAT, retry: BOOKKEEPING.retry });
  let scheduledAt = workflowNow();
  let answer: BegunRun & { begun: NotQueued };
  try {
    answer = await waitForSlot(input, () => {
      scheduledAt = workflowNow();
      return beginRunStep(input);
    });
  } catch (err) {
    if (ranOutOfTime(err)) return { timedOut: true };
    throw err;
  }
  const { begun, first } = answer;
  if (begun.status !== 'running') return { status: begun.status };
  if (begun.agent) span.agent(begun.agent);
  const deadline = Math.min(scheduledAt + timeoutMs, workflowNow() + begun.timeoutMs);
  if (!first) return begun.timeoutMs <= 0 ? { timedOut: true } : makeStepsBy(deadline, [...begun.steps]);
  if (first.status === 'stopped') return { timedOut: false };
  const queue = [...begun.steps, ...(first.next ?? [])];
  if (first.ended && queue.length === 0) return { timedOut: false, ended: first.ended };
  return makeStepsBy(deadline, queue);
}

/** beginRunStep's answer once the run is not waiting for a slot. */
type NotQueued = Exclude<BeginRunOutcome, { status: 'queued' }>;

/** Asks for a slot (`ask`: beginRunStep) until the run is not queued, waiting between asks. */
async function waitForSlot<T extends { begun: BeginRunOutcome }>(input: RunInput, ask: () => Promise<T>): Promise<T & { begun: NotQueued }> {
  let woken = false;
  setHandler(runSlotFreed, () => {
    woken = true;
  });
  for (let asks = 1; ; asks++) {
    woken = false; // a signal that arrives while the ask runs is kept for the wait below
    const answer = await ask();
    const { begun } = answer;
    if (begun.status !== 'queued') return { ...answer, begun };
    if (asks >= ASKS_PER_HISTORY || workflowInfo().continueAsNewSuggested) await continueAsNew<typeof runAgentWorkflow>(input);
    await condition(() => woken, begun.recheckMs);
  }
}

/**
 * Makes the steps of `queue` in order, and those they add, by `deadline` (workflow time): each step's
 * schedule-to-close is the time left. `timedOut` when the time ran out first; `ended` when the last step
 * ended the run itself (engine/runs/steps.ts `lastStepEnds`: the workflow returns that instead of calling
 * finishRun — one local activity and one workflow activation less per run).
 */
async function makeStepsBy(deadline: number, queue: StepRef[]): Promise<{ timedOut: boolean; ended?: 'succeeded' | 'failed' }> {
  for (let ref = queue.shift(); ref; ref = queue.shift()) {
    const left = deadline - workflowNow();
    if (left <= 0) return { timedOut: true };
    let outcome: StepOutcome;
    if (ref.type === 'approval') {
      // A wait for a person (approval-wait.ts): its time does not count against the run's.
      const waited = await awaitApproval(ref, workflowNow);
      deadline += waited.waitedMs;
      outcome = waited.outcome;
      if (outcome.status === 'stopped') return { timedOut: false };
      queue.push(...(outcome.next ?? []));
      continue;
    }
    const make = stepActivities(Math.max(left, 1_000));
    try {
      outcome = await make[ref.type](ref);
    } catch (err) {
      if (ranOutOfTime(err)) return { timedOut: true };
      throw err;
    }
    if (outcome.status === 'stopped') return { timedOut: false };
    queue.push(...(outcome.next ?? []));
    if (outcome.ended && queue.length === 0) return { timedOut: false, ended: outcome.ended };
  }
  return { timedOut: false };
}
