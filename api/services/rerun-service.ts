import type { Db } from '../../db/pool';
import type { AgentsRepository } from '../../db/repositories/agents';
import { createRerunsRepository } from '../../db/repositories/reruns';
import { createRunReplaysRepository } from '../../db/repositories/run-replays';
import type { RunsRepository } from '../../db/repositories/runs';
import type { Engine } from '../../engine';
import type { Config } from '../../lib/config';
import type { Queryable } from '../../db/pool';
import { ConflictError, NotFoundError, TooManyRequestsError, ValidationError } from '../errors';
import { toReplay, toRun, type Replay, type Run } from '../mappers';
import { MAX_REPLAY_RUNS, type RerunBody, type ReplayBody } from '../schemas/reruns';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { admitRunsOf as admitRuns } from './run-admission';
import { createUsageRepository } from '../../db/repositories/usage';

/**
 * Reruns and replays (docs/api.md § Rerun and replay): a rerun is a new run that copies the steps of an
 * ended run before `fromStep` and makes the rest with the agent as it is now; a replay reruns, from step
 * 0, an agent's failed runs of a window, through a workflow (engine/runs/replays.ts).
 */
export function createRerunService(deps: {
  db: Db;
  agents: AgentsRepository;
  runs: RunsRepository;
  /** The engine's unit of work: a rerun's start, a replay's workflow, handed off after the commit. */
  engine: Pick<Engine, 'transaction'>;
  audit: AuditTrail;
  config: Pick<Config, 'model'>;
  /** RECOVER_INTERVAL: one replay per agent per interval. */
  recoverInterval: { text: string; ms: number };
}) {
  const { db, agents, engine, audit } = deps;
  const reruns = createRerunsRepository(db);
  const replays = createRunReplaysRepository(db);

  const admission = { agents, usage: createUsageRepository(db), config: deps.config };
  const admitRunsOf = (q: Queryable, caller: Caller, agentId: string) => admitRuns(q, admission, caller, agentId);

  return {
    /**
     * A rerun of an ended run from `fromStep` (default 0), queued as any run start is (the run line, the
     * agent's status, the model budget): the run, its copied steps and the steps still to make, and its
     * start, in one transaction. 404 for a run of another account; 409 while the run has not ended; 400 for
     * `fromStep` past its last step, or `input` with a `fromStep` after the first.
     */
    async rerun(caller: Caller, runId: string, body: RerunBody): Promise<Run> {
      const fromStep = body?.fromStep ?? 0;
      const input = body?.input !== undefined ? { value: body.input } : undefined;
      if (input && fromStep > 0) {
        throw new ValidationError("body.input: only with fromStep 0 (or none): a rerun from a later step goes on with the run's input, which its copied steps answered");
      }
      const run = await engine.transaction(async (tx, unit) => {
        const original = await deps.runs.findAccountRun(caller.accountId, runId, tx);
        if (!original) throw new NotFoundError('Run');
        if (original.status !== 'succeeded' && original.status !== 'failed') {
          throw new ConflictError(`Run has not ended (${original.status}): only a succeeded or failed run can be rerun; cancel it or wait for its end`);
        }
        await admitRunsOf(tx, caller, original.agent_id);
        const steps = await reruns.countSteps(original.id, tx);
        if (fromStep > steps) throw new ValidationError(`body.fromStep: must be at most ${steps}, the run's number of steps`);
        const rerun = await reruns.insertRerun(tx, original, fromStep, input);
        await unit.startRun(rerun);
        await audit.record(tx, caller, 'run.rerun', rerun.id);
        return rerun;
      });
      return toRun(run);
    },

    /**
     * A replay of the agent's failed runs created in [since, until) (until: now when omitted): the oldest
     * MAX_REPLAY_RUNS of them are chosen now, and the workflow `replay:<id>` reruns them from step 0, batch
     * by batch, each rerun through the account's line of runs. 429 within RECOVER_INTERVAL of the agent's
     * last replay (read under the agent's row lock, so concurrent requests and API processes agree).
     */
    async replay(caller: Caller, agentId: string, body: ReplayBody): Promise<Pick<Replay, 'id' | 'count'>> {
      const since = new Date(body.since);
      const until = body.until === undefined ? new Date() : new Date(body.until);
      if (since.getTime() >= until.getTime()) throw new ValidationError(`body.since: must be before ${body.until === undefined ? 'now (until omitted)' : 'until'}`);
      const replay = await engine.transaction(async (tx, unit) => {
        await admitRunsOf(tx, caller, agentId);
        // A replay starts up to a thousand runs: a loop of them would flood the account's line.
        const waitMs = await replays.msUntilNextReplay(agentId, deps.recoverInterval.ms, tx);
        if (waitMs > 0) {
          const seconds = Math.max(1, Math.ceil(waitMs / 1000));
          throw new TooManyRequestsError(`at most one replay per agent every ${deps.recoverInterval.text} (RECOVER_INTERVAL); try again in ${seconds} s`, seconds);
        }
        const row = await replays.create(tx, { accountId: caller.accountId, agentId, since, until, limit: MAX_REPLAY_RUNS });
        if (row.count > 0) await unit.startReplay({ id: row.id, accountId: caller.accountId, agentId });
        await audit.record(tx, caller, 'run.replay', row.id);
        return row;
      });
      return { id: replay.id, count: replay.count };
    },

    /** A replay's progress. */
    async getReplay(caller: Caller, agentId: string, id: string): Promise<Replay> {
      if (!(await agents.findById(caller.accountId, agentId))) throw new NotFoundError('Agent');
      const row = await replays.find(caller.accountId, agentId, id);
      if (!row) throw new NotFoundError('Replay');
      return toReplay(row);
    },
  };
}
export type RerunService = ReturnType<typeof createRerunService>;
