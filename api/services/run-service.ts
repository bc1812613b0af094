import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { PageRequest } from '../../db/paging';
import { withTransaction, type Db } from '../../db/pool';
import type { AgentsRepository } from '../../db/repositories/agents';
import { createRerunsRepository } from '../../db/repositories/reruns';
import type { RunStepsRepository } from '../../db/repositories/run-steps';
import type { RunsRepository } from '../../db/repositories/runs';
import { createThreadMessagesRepository } from '../../db/repositories/thread-messages';
import { createUsageRepository } from '../../db/repositories/usage';
import { emitRunEnd, RUN_CANCELLED_ERROR, workflowIds, type Engine } from '../../engine';
import type { Config } from '../../lib/config';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../errors';
import { toRun, toRunDetail, toRunStep, toThreadMessage, type Run, type RunDetail, type RunStep } from '../mappers';
import type { IndexPage, IndexPageRequest } from '../pagination';
import type { CreateRunInput } from '../schemas/runs';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { admitRunsOf } from './run-admission';

/** The reruns GET /api/runs/:id lists. */
const MAX_RERUNS_LISTED = 20;

/** How long a cancel waits for Temporal to take it. */
const CANCEL_DEADLINE_MS = 5_000;

export function createRunService(deps: {
  db: Db;
  agents: AgentsRepository;
  runs: RunsRepository;
  runSteps: RunStepsRepository;
  /** The engine's unit of work: a run's start, a cancelled run's agent.failed, handed off after the commit. */
  engine: Pick<Engine, 'transaction'>;
  audit: AuditTrail;
  /** The process's one Temporal client: a cancel asks the run's workflow to stop. */
  temporal: Client;
  config: Pick<Config, 'runs' | 'model'>;
}) {
  const { db, agents, runs, runSteps, engine, audit } = deps;
  const reruns = createRerunsRepository(db);
  const threadMessages = createThreadMessagesRepository(db);
  const admission = { agents, usage: createUsageRepository(db), config: deps.config };

  async function requireAgent(caller: Caller, agentId: string): Promise<void> {
    if (!(await agents.findById(caller.accountId, agentId))) throw new NotFoundError('Agent');
  }

  /** Asks the run's workflow to stop; false when it has none (not started yet, or already closed). */
  async function cancelWorkflow(runId: string): Promise<boolean> {
    try {
      // Bounded: a Temporal that does not answer is a 503 in seconds, not a request that hangs.
      await deps.temporal.withDeadline(Date.now() + CANCEL_DEADLINE_MS, () => deps.temporal.workflow.getHandle(workflowIds.run(runId)).cancel());
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw new ServiceUnavailableError('Temporal did not take the cancel in time: the run is unchanged; try again', 5);
    }
  }

  return {
    /**
     * Queues a run: the run row and its `run:<id>` workflow hand-off commit together, then the hand-off
     * is kicked. Draft and active agents run; templates and paused agents don't (409). (A run queued
     * before its agent was paused or made a template does not start either: engine/runs/admission.ts.) A run
     * that would use the model while the account has spent MODEL_TOKENS_PER_DAY is refused (429, until
     * the next UTC day); nothing is written.
     */
    async create(caller: Caller, agentId: string, body: CreateRunInput): Promise<Run> {
      const run = await engine.transaction(async (tx, unit) => {
        await admitRunsOf(tx, admission, caller, agentId);
        const run = await runs.insertRun({ accountId: caller.accountId, agentId, input: body?.input ?? null, threadId: body?.threadId ?? null }, tx);
        await unit.startRun(run);
        await audit.record(tx, caller, 'run.create', run.id);
        return run;
      });
      return toRun(run);
    },

    /**
     * Cancels a queued or running run (POST /api/runs/:id/cancel); an ended one is a 409. A run with a
     * workflow is cancelled through Temporal: the step in flight is cancelled (its call torn down), no
     * further step is made, and the workflow fails the run with "the run was cancelled" and emits
     * agent.failed (workflows/run.ts), so the answer is the run as it stands when the cancel was asked
     * for. A queued run with no workflow yet (parked in its account's line, or its start not yet handed
     * off) is failed here the same way, at once; a workflow that starts later finds it ended and stops.
     * So is a running run whose workflow is gone (terminated by an operator). A run that changed state
     * meanwhile (its workflow began it) is looked at again: it then has a workflow, or has ended.
     */
    async cancel(caller: Caller, id: string): Promise<Run> {
      for (;;) {
        const row = await runs.findAccountRun(caller.accountId, id);
        if (!row) throw new NotFoundError('Run');
        if (row.status !== 'queued' && row.status !== 'running' && row.status !== 'waiting') {
          throw new ConflictError(`Run has ended (${row.status}): only a queued, running or waiting run can be cancelled`);
        }
        const from = row.status;
        if (await cancelWorkflow(id)) {
          await withTransaction(db, (tx) => audit.record(tx, caller, 'run.cancel', id));
          return toRun(row);
        }
        const cancelled = await engine.transaction(async (tx, unit) => {
          const ended = await runs.cancelRunWithoutWorkflow(caller.accountId, id, from, RUN_CANCELLED_ERROR, tx);
          if (!ended) return null;
          await emitRunEnd(unit, ended); // agent.failed, as the workflow's failRun emits it
          await audit.record(tx, caller, 'run.cancel', id);
          return ended;
        });
        if (cancelled) return toRun(cancelled);
        // Its state moved meanwhile: its workflow began it (cancel that), or it ended (409).
      }
    },

    async list(caller: Caller, agentId: string, page: PageRequest) {
      await requireAgent(caller, agentId);
      const result = await runs.listAgentRuns(caller.accountId, agentId, page);
      return { ...result, items: result.items.map(toRun) };
    },

    /** The account's runs across its agents (GET /api/runs), optionally of one agent and/or in one status. */
    async listAll(caller: Caller, filter: { agentId?: string; status?: string }, page: PageRequest) {
      const result = await runs.listAccountRuns(caller.accountId, filter, page);
      return { ...result, items: result.items.map(toRun) };
    },

    /** The run with its latest reruns (newest first, at most MAX_RERUNS_LISTED). */
    async get(caller: Caller, id: string): Promise<RunDetail> {
      const row = await runs.findAccountRun(caller.accountId, id);
      if (!row) throw new NotFoundError('Run');
      return toRunDetail(row, await reruns.listReruns(id, MAX_RERUNS_LISTED));
    },

    /** A conversation thread of the agent, newest message first; a thread nothing was said in yet is empty. */
    async threadMessages(caller: Caller, agentId: string, threadId: string, page: PageRequest) {
      await requireAgent(caller, agentId);
      const result = await threadMessages.listThreadMessages(caller.accountId, agentId, threadId, page);
      return { ...result, items: result.items.map(toThreadMessage) };
    },

    /** The run's steps in the order they are made (not newest first: a run reads top to bottom). */
    async steps(caller: Caller, id: string, page: IndexPageRequest): Promise<IndexPage<RunStep>> {
      if (!(await runs.findAccountRun(caller.accountId, id))) throw new NotFoundError('Run');
      const { items, more } = await runSteps.listRunStepsPage(id, page);
      return { items: items.map(toRunStep), nextAfter: more ? items[items.length - 1]!.step_index : undefined };
    },
  };
}
export type RunService = ReturnType<typeof createRunService>;
