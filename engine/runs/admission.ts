import type { Queryable } from '../../db/pool';
import { createAgentsRepository } from '../../db/repositories/agents';
import { createRunStepsRepository, type NewRunStep } from '../../db/repositories/run-steps';
import { createRunsRepository, type RunExecutor, type RunRow } from '../../db/repositories/runs';
import { createRerunsRepository, type RerunContext } from '../../db/repositories/reruns';
import type { AgentRow } from '../../db/repositories/agents';
import { createThreadMessagesRepository, type ThreadMessageRow } from '../../db/repositories/thread-messages';
import { createToolsRepository } from '../../db/repositories/tools';
import type { BeginRunOutcome, RunAgent, RunInput } from '../contract';
import { QUEUE_PLACE_MS, QUEUE_RECHECK_MS, runLineLimits } from '../runs/run-line';
import { fromExecutor, toRef, type RunContext } from './context';
import type { RunEnd } from './end';
import type { WakeUps } from './wake-ups';
import type { Unit } from '../unit';
import type { ModelContext } from './executor/model-step';

/** What a run starts with: its executor, the steps it plans, and for a rerun from a later step its context as planned now. */
type Plan = { kind: RunExecutor; steps: NewRunStep[]; agent?: RunAgent; rerun?: RerunContext };

/** A run's admission: queued → running when its account's line lets it, its steps planned (`begin`). */
export function createRunAdmission({ deps, executors }: RunContext, runEnd: RunEnd, wakeUps: WakeUps) {
  const { db, config, runLine } = deps;
  const agents = createAgentsRepository(db);
  const toolsRepository = createToolsRepository(db);
  const runs = createRunsRepository(db);
  const runSteps = createRunStepsRepository(db);
  const reruns = createRerunsRepository(db);
  const threadMessages = createThreadMessagesRepository(db);
  const { limit, holdMs } = runLineLimits(config);
  const { end } = runEnd;
  const { afterEnd } = wakeUps;

  /**
   * The answer for a run already running (a retry whose answer was lost): the time it has left, and the
   * steps planned when it began (`planned_by` null). The steps a step's answer added are not listed: the
   * step answers them (`answered`) when it is asked again, so the workflow's queue holds each step once,
   * in the order it had the first time.
   */
  async function runningOutcome(q: Queryable, run: Pick<RunRow, 'id' | 'started_at'>): Promise<BeginRunOutcome & { status: 'running' }> {
    const steps = await runSteps.listRunSteps(run.id, q);
    return { status: 'running', timeoutMs: timeLeft(run.started_at), steps: steps.filter((s) => s.planned_by === null && !s.copied).map(toRef) };
  }

  /** The run's time left (RUN_TIMEOUT_MS from the moment it started running). */
  function timeLeft(startedAt: Date | null): number {
    const { timeoutMs } = config.runs;
    const elapsed = startedAt ? Date.now() - startedAt.getTime() : 0;
    return Math.min(timeoutMs, Math.max(0, timeoutMs - elapsed));
  }

  /**
   * Which executor runs the agent, and the steps it plans for this run (reads only). A rerun from a step
   * after the first has its steps already (db/repositories/reruns.ts insertRerun): it is made by the executor
   * that made the steps it copied, and a model run's context is planned now (`rerun`: the agent as it is now).
   */
  async function planOf(q: Queryable, run: RunRow): Promise<Plan> {
    const agent = await agents.findById(run.account_id, run.agent_id, q);
    if (!agent) return { kind: 'tools', steps: [] }; // deleted: the locked read says 'gone'
    if (run.rerun_from_step) return rerunPlanOf(q, run, agent);
    const kind = executors.kindFor(agent);
    const tools = await toolsRepository.listEnabledForAgent(agent.id, q);
    const memory = agent.memory_config;
    const history: ThreadMessageRow[] =
      kind === 'model' && run.thread_id && memory.type !== 'none'
        ? await threadMessages.listThreadWindow(
            {
              agentId: agent.id,
              threadId: run.thread_id,
              maxMessages: memory.maxMessages,
              ttlMinutes: memory.ttlMinutes,
              maxBytes: config.model.contextMaxBytes,
            },
            q,
          )
        : [];
    const steps = fromExecutor('plan the run', () => executors.get(kind).plan({ agent, tools, input: run.input, history }));
    const model = kind === 'model' ? steps[0]?.name : undefined;
    return { kind, steps, agent: { id: agent.id, name: agent.name, ...(model ? { model } : {}) } };
  }

  /**
   * The plan of a rerun from a step after the first: no step to add. A model run's copied first step holds
   * the context its model steps read (executor/model-step.ts contextOf): planned again now, with the agent's
   * system message, model and tools as they are now and the thread's messages the original remembered, so the
   * steps still to make go on with the agent as it is now, after the copied conversation.
   */
  async function rerunPlanOf(q: Queryable, run: RunRow, agent: AgentRow): Promise<Plan> {
    const first = await runSteps.findRunStep(run.id, 0, q);
    if (first?.type !== 'model') return { kind: 'tools', steps: [] };
    const before = first.input as ModelContext;
    const start = before.messages[0]?.role === 'system' ? 1 : 0;
    const history = before.messages.slice(start, start + (before.remembered ?? 0)) as unknown as ThreadMessageRow[];
    const tools = await toolsRepository.listEnabledForAgent(agent.id, q);
    const [planned] = fromExecutor('plan the rerun', () => executors.get('model').plan({ agent, tools, input: run.input, history }));
    const context = planned!.input as ModelContext;
    return { kind: 'model', steps: [], agent: { id: agent.id, name: agent.name, model: context.model }, rerun: { context, model: context.model } };
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
    const inLine = await runs.findRunInLine(input.runId, { placeMs: QUEUE_PLACE_MS, holdMs, cap: limit });
    if (!inLine) return { status: 'gone' }; // its agent was deleted
    const first = inLine.run;
    if (first.status === 'succeeded' || first.status === 'failed') return { status: first.status };
    // The plan is made before the account's lock is taken (reads of the agent, its tools and its
    // thread), when a slot looks free: the lock is held only for the slot decision and its writes.
    const slotLooksFree = inLine.running + inLine.ahead < limit;
    const plan = first.status === 'queued' && slotLooksFree ? await planOf(db, first) : null;
    /** The decision, under the account's lock: shared when every open run of the account fits in its slots (`allFit`: no one waits, nothing to count), else exclusive. */
    const decide = async (tx: Queryable, unit: Unit, allFit: boolean): Promise<{ outcome: BeginRunOutcome; ended?: boolean }> => {
      const found = await runs.findRunForUpdateWithAgent(input.runId, tx);
      if (!found) return { outcome: { status: 'gone' } };
      const { run, agentStatus } = found;
      if (run.status === 'succeeded' || run.status === 'failed') return { outcome: { status: run.status } };
      if (run.status === 'running') return { outcome: await runningOutcome(tx, run) };

      if (agentStatus === null) return { outcome: { status: 'gone' } };
      if (agentStatus === 'paused' || agentStatus === 'template') {
        const ended = await end(unit, run.id, 'failed', null, `Agent is ${agentStatus}: the run did not start (it was queued when the agent became ${agentStatus})`);
        return { outcome: { status: 'failed' }, ended: ended !== null };
      }

      if (!allFit) {
        const running = await runs.countRunningRuns(run.account_id, holdMs, tx);
        const ahead = running < limit ? await runs.countQueuedAhead(run, QUEUE_PLACE_MS, limit, tx) : 0;
        if (running + ahead >= limit) {
          await runs.markRunWaiting(run.id, tx);
          return { outcome: { status: 'queued', recheckMs: QUEUE_RECHECK_MS } };
        }
      }
      const { kind, steps, agent, rerun } = plan ?? (await planOf(tx, run));
      const planned = await runSteps.markRunRunningWithSteps(run.id, kind, steps, tx);
      if (!run.rerun_from_step) return { outcome: { status: 'running', timeoutMs: config.runs.timeoutMs, steps: planned.map(toRef), ...(agent ? { agent } : {}) } };
      // A rerun from a step after the first: its steps still to make were written with it; the copied ones are not made.
      if (rerun) await reruns.refreshContext(tx, run.id, rerun);
      return { outcome: { ...(await runningOutcome(tx, { id: run.id, started_at: null })), ...(agent ? { agent } : {}) } };
    };
    const result =
      (first.status === 'queued' ? await runLine.whenAllFit(first.account_id, (tx, unit) => decide(tx, unit, true)) : null) ??
      (await runLine.locked(first.account_id, (tx, unit) => decide(tx, unit, false)));
    if (result.ended) afterEnd(first.account_id);
    return result.outcome;
  }

  return { begin };
}
