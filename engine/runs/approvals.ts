import { createApprovalsRepository, type ApprovalRow } from '../../db/repositories/approvals';
import { createRunStepsRepository, type NewRunStep, type RunStepRow } from '../../db/repositories/run-steps';
import { createRunsRepository } from '../../db/repositories/runs';
import { approvalTimeoutOf } from '../../lib/model-settings';
import { createAgentsRepository } from '../../db/repositories/agents';
import type { ApprovalResume, ApprovalWait, StepOutcome, StepRef } from '../contract';
import type { ApprovalStepInput, ApprovalStepOutput, ToolStepInput } from './executor/model-step';
import { QUEUE_RECHECK_MS, runLineLimits } from './run-line';
import { toRef, type RunContext } from './context';
import type { WakeUps } from './wake-ups';

/**
 * The activities of an approval step (workflows/approval-wait.ts; docs/architecture.md § Approvals):
 * `requestApproval` makes the approval, the run `waiting` (its slot freed) and `run.waiting`, in one
 * transaction; `resumeApproval`, once the workflow is woken (a decision's signal, or the expiry), reads the
 * decision from Postgres, expires it when its time is up, takes a slot again and records the step with
 * the steps it adds: an approve its tool step (the edited arguments), and the turn's last approval the
 * model step after it. Both idempotent: a retry finds what the first attempt wrote.
 */
export function createRunApprovals({ deps }: RunContext, wakeUps: WakeUps) {
  const { db, config, runLine } = deps;
  const agents = createAgentsRepository(db);
  const approvals = createApprovalsRepository(db);
  const runs = createRunsRepository(db);
  const runSteps = createRunStepsRepository(db);
  const { limit, holdMs } = runLineLimits(config);

  const waitOf = (a: ApprovalRow): ApprovalWait => ({ status: 'waiting', approvalId: a.id, expiresAtMs: a.expires_at.getTime(), decided: a.status !== 'pending' });

  async function requestApproval(ref: StepRef): Promise<ApprovalWait> {
    const existing = await approvals.findApprovalOfStep(ref.runId, ref.index);
    if (existing) return existing.status === 'cancelled' ? { status: 'stopped' } : waitOf(existing);
    const run = await runs.findRun(ref.runId);
    if (!run || run.status !== 'running') return { status: 'stopped' };
    const step = await runSteps.findRunStep(ref.runId, ref.index);
    if (!step || step.finished_at) return { status: 'stopped' };
    const agent = await agents.findById(run.account_id, run.agent_id);
    const timeoutMs = approvalTimeoutOf(agent?.config_json) ?? config.approvals.timeout.ms;
    const input = step.input as ApprovalStepInput;
    const made = await deps.transaction(async (tx, unit) => {
      if (!(await approvals.markRunAwaitingApproval(run.id, tx))) return null;
      const { row } = await approvals.insertApproval({
        accountId: run.account_id,
        runId: run.id,
        stepIndex: step.step_index,
        agentId: run.agent_id,
        toolId: input.toolId ?? step.tool_id,
        function: input.function ?? null,
        arguments: input.arguments,
        parameters: input.parameters ?? { type: 'object' },
        expiresInMs: timeoutMs,
      }, tx);
      await unit.emit(
        {
        accountId: run.account_id,
        type: 'run.waiting',
        data: {
          agentId: run.agent_id,
          runId: run.id,
          approvalId: row.id,
          toolId: row.tool_id,
          function: row.function,
          arguments: row.arguments,
          expiresAt: row.expires_at.toISOString(),
        },
        chainDepth: run.chain_depth,
        },
        { agentId: run.agent_id, triggerId: run.trigger_id },
      );
      return row;
    });
    if (!made) {
      const again = await approvals.findApprovalOfStep(ref.runId, ref.index);
      return again && again.status !== 'cancelled' ? waitOf(again) : { status: 'stopped' };
    }
    // The run holds no slot while it waits: the next in its account's line may run (and run.waiting's deliveries start).
    wakeUps.afterEnd(run.account_id);
    return waitOf(made);
  }

  /** The steps a decided approval adds: an approve's tool call (the edited arguments), and the turn's model step after the last one. */
  function stepsAfterDecision(step: RunStepRow, approval: ApprovalRow): { output: ApprovalStepOutput; next: NewRunStep[] } {
    const input = step.input as ApprovalStepInput;
    const model: NewRunStep[] = input.thenModel ? [{ type: 'model', name: input.thenModel }] : [];
    if (approval.status === 'approved') {
      const toolInput: ToolStepInput = { callId: input.callId, arguments: approval.arguments, ...(input.function !== undefined ? { function: input.function } : {}) };
      return {
        output: { approved: true, arguments: approval.arguments },
        next: [{ type: 'tool', name: step.name, toolId: step.tool_id ?? input.toolId, toolType: step.tool_type, input: toolInput }, ...model],
      };
    }
    const output: ApprovalStepOutput =
      approval.status === 'expired'
        ? { rejected: true, comment: `no decision was made by ${approval.expires_at.toISOString()}: the approval expired`, expired: true }
        : { rejected: true, comment: approval.comment };
    return { output, next: model };
  }

  /** A finished step's outcome as it was recorded (a retry after the commit). */
  async function answered(ref: StepRef, step: RunStepRow): Promise<StepOutcome> {
    const next = (await runSteps.listStepsPlannedBy(ref.runId, ref.index)).map(toRef);
    return { status: 'done', ok: step.error === null, ...(next.length ? { next } : {}) };
  }

  async function resumeApproval(ref: StepRef): Promise<ApprovalResume> {
    const step = await runSteps.findRunStep(ref.runId, ref.index);
    if (!step) return { status: 'stopped' };
    if (step.finished_at) return answered(ref, step);
    let approval = await approvals.findApprovalOfStep(ref.runId, ref.index);
    if (!approval || approval.status === 'cancelled') return { status: 'stopped' };
    if (approval.status === 'pending') {
      if (approval.expires_at.getTime() > Date.now()) return { status: 'pending', expiresAtMs: approval.expires_at.getTime() };
      approval = await approvals.expireApproval(approval.id);
      if (!approval || approval.status === 'cancelled') return { status: 'stopped' };
      if (approval.status === 'pending') return { status: 'pending', expiresAtMs: approval.expires_at.getTime() };
    }
    const decided = approval;
    const run = await runs.findRun(ref.runId);
    if (!run) return { status: 'stopped' };
    const after = stepsAfterDecision(step, decided);
    // Back in its account's line (RUN_CONCURRENCY_PER_ACCOUNT): running again only with a free slot; else
    // queued, in line, where a run of the account that ends wakes it (runSlotFreed).
    const resumed = await runLine.locked(run.account_id, async (tx) => {
      const current = await runs.findRun(run.id, tx);
      if (!current || (current.status !== 'waiting' && current.status !== 'queued' && current.status !== 'running')) return 'stopped' as const;
      if (current.status !== 'running') {
        if ((await runs.countRunningRuns(run.account_id, holdMs, tx)) >= limit) {
          await approvals.markDecidedRunQueued(run.id, tx);
          return 'queued' as const;
        }
        await approvals.markRunResumed(run.id, tx);
      }
      const now = new Date();
      return runSteps.finishRunStep(run.id, step.step_index, { output: after.output, error: null, startedAt: step.started_at ?? now, finishedAt: now }, after.next, tx);
    });
    if (resumed === 'stopped') return { status: 'stopped' };
    if (resumed === 'queued') return { status: 'queued', recheckMs: QUEUE_RECHECK_MS };
    if (!resumed) {
      const again = await runSteps.findRunStep(ref.runId, ref.index);
      return again?.finished_at ? answered(ref, again) : { status: 'stopped' };
    }
    return { status: 'done', ok: true, ...(resumed.added.length ? { next: resumed.added.map(toRef) } : {}) };
  }

  return { requestApproval, resumeApproval };
}
