import { createRunStepsRepository } from '../../db/repositories/run-steps';
import { createRunsRepository } from '../../db/repositories/runs';
import type { ApprovalResume, ApprovalWait, CallStepType, BeginRunOutcome, BegunRun, RunInput, RunOutcome, StepOutcome, StepRef } from '../contract';
import type { Engine as ActivityDeps } from '../compose';
import { createExecutors, type Executors } from './executor/select';
import { whileHeartbeating } from '../temporal/heartbeat';
import { createRunAdmission } from './admission';
import { createRunApprovals } from './approvals';
import { createRunEnd } from './end';
import { createRunSteps, interruption } from './steps';
import { createWakeUps } from './wake-ups';

/**
 * The activities of `runAgentWorkflow` (workflows/run.ts): beginRunStep (the run begun and its first step
 * made), one runToolStep per further tool step and one
 * runModelStep per further model step, finishRun, and failRun when one of them failed for good. Each
 * concern has its file: admission.ts (queued → running, in the account's line), steps.ts (a step made
 * once), end.ts (the run's end and its event), wake-ups.ts (the line moves after an end). Their
 * failures are classified like every activity's (activities/failures.ts).
 */
export function createRunActivities(deps: ActivityDeps, executors: Executors = createExecutors(deps.config)) {
  const { db } = deps;
  const runs = createRunsRepository(db);
  const runSteps = createRunStepsRepository(db);
  const ctx = { deps, executors };
  const wakeUps = createWakeUps(deps);
  const runEnd = createRunEnd(ctx, wakeUps);
  const { settle, finishFrom } = runEnd;
  const { begin } = createRunAdmission(ctx, runEnd, wakeUps);
  const { stepOf, toolStep, modelStep } = createRunSteps(ctx, runEnd);
  const { requestApproval, resumeApproval } = createRunApprovals(ctx, wakeUps);

  return {
    /** An approval step asked for: the run waits (engine/runs/approvals.ts). */
    requestApproval: (ref: StepRef): Promise<ApprovalWait> => requestApproval(ref),

    /** An approval step decided (or expired): the run goes on (engine/runs/approvals.ts). */
    resumeApproval: (ref: StepRef): Promise<ApprovalResume> => resumeApproval(ref),

    /** queued → running when a slot is free, its steps planned (`begin`): what runs begun before beginRunStep asked; no workflow asks it now (docs/architecture.md § Retiring workflow patches: deleted at stage 3). */
    beginRun: (input: RunInput): Promise<BeginRunOutcome> => begin(input),

    /**
     * beginRun and the run's first step in one activity (workflows/run.ts BEGUN_BY_FIRST_STEP_PATCH): the same
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
      const askedAt = Date.now();
      const begun = await whileHeartbeating(() => begin(input));
      if (begun.status !== 'running') return { begun };
      const [first, ...rest] = begun.steps;
      if (!first || begun.timeoutMs <= 0) return { begun };
      const interrupted = interruption();
      if (interrupted) throw interrupted;
      // The planned steps are model or tool steps; an approval step is only ever added by a model step's answer.
      const outcome = await stepOf[first.type as CallStepType](first);
      // The time left as of this answer (counted from before the slot decision: never more than the run has).
      return { begun: { ...begun, timeoutMs: Math.max(0, begun.timeoutMs - (Date.now() - askedAt)), steps: rest }, first: outcome };
    },

    /** A tool step (`toolStep`). */
    runToolStep: (ref: StepRef): Promise<StepOutcome> => toolStep(ref),

    /** A model step (`modelStep`). */
    runModelStep: (ref: StepRef): Promise<StepOutcome> => modelStep(ref),

    /**
     * Ends the run from its steps (the executor composes the output; the engine keeps it within
     * 256 KiB): succeeded or failed by the executor's rule, or failed with `timed out` when the run's
     * time ran out. Emits agent.completed / agent.failed once, in the same transaction; a retry after
     * the end committed changes nothing and emits nothing again.
     */
    async finishRun(input: RunInput & { timedOut?: boolean }): Promise<RunOutcome> {
      const run = await runs.findRun(input.runId);
      if (!run) return { status: 'gone' };
      if (run.status === 'succeeded' || run.status === 'failed') return { status: run.status };
      return await finishFrom(run, await runSteps.listRunSteps(run.id), input.timedOut ?? false);
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
