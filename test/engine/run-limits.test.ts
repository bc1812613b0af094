import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { temporal } from '@temporalio/proto';
import { withTransaction } from '../../db/pool';
import { createRunsRepository } from '../../db/repositories/runs';
import { startRunWorkflow } from '../../engine/outbox/starts';
import { workflowIds } from '../../engine/temporal/names';
import { api } from '../helpers/api';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { startModelServer, textReply, type ModelServer } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';

const TIMEOUT_MS = 3_000;
const SLOW_MS = 1_500;

/**
 * The bounds of runs (docs/architecture.md § Limits and fairness): RUN_CONCURRENCY_PER_ACCOUNT runs of an account at once, the rest
 * queued and started in created order; RUN_TIMEOUT_MS from the moment a run starts running; queued runs
 * of agents paused meanwhile don't start. Observed at the tools' endpoint, on the real engine.
 */
/** Whether a history event records a local activity of this type (a marker whose details name it). */
function isLocalActivity(event: { markerRecordedEventAttributes?: { markerName?: string | null; details?: Record<string, { payloads?: { data?: Uint8Array | null }[] | null }> | null } | null }, type: string): boolean {
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity') return false;
  return Object.values(marker.details ?? {}).some((d) => (d.payloads ?? []).some((p) => p.data && Buffer.from(p.data).toString('utf8').includes(`"${type}"`)));
}

describe('run limits: concurrency per account, order, timeout', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let service: Receiver;
  let models: ModelServer;
  // What the endpoint sees of the calls in flight, per account-specific path.
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();

  before(async () => {
    service = await startReceiver(suite, (req) => {
      const path = new URL(req.url, 'http://x').pathname;
      if (path === '/hang') return { delayMs: 120_000 };
      if (!path.startsWith('/slow')) return { body: { ok: path } };
      inFlight.set(path, (inFlight.get(path) ?? 0) + 1);
      maxInFlight.set(path, Math.max(maxInFlight.get(path) ?? 0, inFlight.get(path)!));
      setTimeout(() => inFlight.set(path, inFlight.get(path)! - 1), SLOW_MS);
      return { body: { ok: path }, delayMs: SLOW_MS };
    });
    models = await startModelServer(suite);
    // A tool call's (and a model call's) own limit far beyond the run's, so only the run's time limit can abort the hanging call.
    h = await startEngine(suite, __filename, {
      RUN_CONCURRENCY_PER_ACCOUNT: '2',
      RUN_TIMEOUT_MS: String(TIMEOUT_MS),
      TOOL_TIMEOUT_MS: '120000',
      MODEL_BASE_URL: models.baseUrl,
      MODEL_API_KEY: 'sk-run-limits',
      MODEL_TIMEOUT_MS: '120000',
    });
  });

  async function agentWithTool(u: TestUser, path: string, name = 'tool'): Promise<string> {
    const agent = await api(h.app, u).post('/api/agents', { name: `agent ${path}` });
    assert.equal(agent.statusCode, 201, agent.body);
    const tool = await api(h.app, u).post(`/api/agents/${agent.json().id}/tools`, { type: 'custom', name, configJson: { endpoint: `${service.url}${path}`, method: 'POST', bodyTemplate: '{{input}}' } });
    assert.equal(tool.statusCode, 201, tool.body);
    return agent.json().id;
  }

  async function startRun(u: TestUser, agentId: string, input: unknown): Promise<string> {
    const res = await api(h.app, u).post(`/api/agents/${agentId}/runs`, { input });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().id;
  }

  async function finished(runId: string) {
    return waitFor(`run ${runId} to finish`, async () => {
      const run = await createRunsRepository(h.db).findRun(runId);
      return (run?.status === 'succeeded' || run?.status === 'failed') && run;
    }, 30_000);
  }

  const callsTo = (path: string) => service.requests.filter((r) => new URL(r.url, 'http://x').pathname === path);

  /** A queued run whose workflow has not started (yet): inserted as the API would, without the hand-off. */
  async function queuedWithoutWorkflow(agentId: string, createdAgo: string) {
    const { rows } = await h.db.query(
      `INSERT INTO runs (account_id, agent_id, input, created_at) SELECT account_id, id, '"late"', now() - $2::interval FROM agents WHERE id = $1
       RETURNING id, account_id, agent_id, trigger_id`,
      [agentId, createdAgo],
    );
    return rows[0] as { id: string; account_id: string; agent_id: string; trigger_id: null };
  }

  it(`at most 2 runs of an account run at once, in created order; another account is not held back`, async () => {
    const a = await registerUser(h.app);
    const b = await registerUser(h.app);
    const agentA = await agentWithTool(a, '/slow-a');
    const agentB = await agentWithTool(b, '/slow-b');

    let maxRunning = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM runs WHERE account_id = (SELECT account_id FROM agents WHERE id = $1) AND status = 'running'`, [agentA]);
        maxRunning = Math.max(maxRunning, rows[0].n);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    const runs: string[] = [];
    for (let i = 0; i < 6; i++) runs.push(await startRun(a, agentA, { i }));
    const other = await startRun(b, agentB, { other: true });

    // The runs past the two slots wait in Postgres (parked), without a workflow the Temporal server keeps.
    const { rows: parked } = await h.db.query(`SELECT id FROM runs WHERE id = ANY($1) AND parked ORDER BY created_at`, [runs]);
    assert.deepEqual(parked.map((r) => r.id), runs.slice(2), 'the four runs past the limit are parked');
    await assert.rejects(h.engine.client.workflow.getHandle(workflowIds.run(runs[5]!)).describe(), { name: 'WorkflowNotFoundError' }, 'a parked run has no workflow');

    const otherRun = await finished(other);
    assert.equal(otherRun.status, 'succeeded');
    const { rows: stillQueued } = await h.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'queued'`, [runs]);
    assert.ok(stillQueued[0].n >= 2, `account B's run finished while A still had ${stillQueued[0].n} queued: it was not held back`);

    const done = [];
    for (const id of runs) done.push(await finished(id));
    watching = false;
    await watcher;

    assert.ok(done.every((r) => r.status === 'succeeded'));
    assert.equal(maxInFlight.get('/slow-a'), 2, 'two calls at once at the endpoint, never more');
    assert.equal(maxRunning, 2, 'never more than two runs running');
    // Slots are granted in created order, two at a time; two runs granted slots at the same moment may
    // start (and call) a few milliseconds apart in either order.
    const round = (i: number) => Math.floor(i / 2);
    const calls = callsTo('/slow-a').map((r) => round(JSON.parse(r.body).i));
    assert.deepEqual(calls, [0, 0, 1, 1, 2, 2], 'called in created order, round by round');
    const byStart = done.map((r, i) => ({ i, at: r.started_at!.getTime() })).sort((x, y) => x.at - y.at);
    assert.deepEqual(byStart.map((r) => round(r.i)), [0, 0, 1, 1, 2, 2], 'started in created order, round by round');

    // Parked runs got their workflow when a run of their account ended and freed a slot (they would
    // otherwise wait for the reconciler's round), and asked for a slot once or twice each, not in a loop.
    for (const id of runs.slice(2)) {
      const history = await h.engine.client.workflow.getHandle(workflowIds.run(id)).fetchHistory();
      const events = history.events ?? [];
      // A new run asks by beginRunStep (its slot and its first step in one activity task).
      const asks = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'beginRunStep').length;
      assert.equal(events.filter((e) => isLocalActivity(e, 'beginRun')).length, 0, `run ${id}: no beginRun local activity`);
      assert.ok(asks >= 1, `run ${id}: no beginRunStep in its history`);
      assert.ok(asks <= 2, `run ${id} asked for a slot ${asks} times`);
    }
  });

  it('a run that hangs fails with "timed out" at RUN_TIMEOUT_MS, and its hanging request is aborted', async () => {
    const u = await registerUser(h.app);
    const agentId = await agentWithTool(u, '/fast', 'quick');
    const tool = await api(h.app, u).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'stuck', configJson: { endpoint: `${service.url}/hang`, method: 'GET' } });
    assert.equal(tool.statusCode, 201);
    const runId = await startRun(u, agentId, null);

    const run = await finished(runId);
    assert.equal(run.status, 'failed');
    assert.equal(run.error, 'timed out');
    const took = run.finished_at!.getTime() - run.started_at!.getTime();
    assert.ok(took >= TIMEOUT_MS - 100 && took < TIMEOUT_MS + 2_000, `ended ${took} ms after it started`);
    const output = run.output as { tools: Record<string, { ok: boolean; error?: string }> };
    assert.equal(output.tools.quick!.ok, true, 'what finished in time is kept');
    assert.deepEqual({ ok: output.tools.stuck!.ok, error: output.tools.stuck!.error }, { ok: false, error: 'timed out' });
    const { rows: events } = await h.db.query(`SELECT data FROM events WHERE type = 'agent.failed' AND data ->> 'runId' = $1`, [runId]);
    assert.deepEqual(events.map((e) => e.data), [{ agentId, runId, error: 'timed out', chainDepth: 0 }]);

    // The step's activity is cancelled through its heartbeat, and tears the request down.
    await waitFor('the hanging request to be aborted', async () => callsTo('/hang')[0]?.aborted, 10_000);
    assert.equal(callsTo('/hang').length, 1, 'not retried');
    const { rows: steps } = await h.db.query(`SELECT name, finished_at FROM run_steps WHERE run_id = $1 ORDER BY step_index`, [runId]);
    assert.deepEqual(steps.map((st) => [st.name, st.finished_at !== null]), [['quick', true], ['stuck', false]], 'a late answer is never recorded');

    // The time limit is the step activity's own (schedule-to-close: the time left), not a timer of the workflow.
    const history = await h.engine.client.workflow.getHandle(workflowIds.run(runId)).fetchHistory();
    const runEvents = history.events ?? [];
    assert.equal(runEvents.filter((e) => e.timerStartedEventAttributes).length, 0, 'no timer in the run\'s history');
    const timedOut = runEvents.flatMap((e) => (e.activityTaskTimedOutEventAttributes ? [e.activityTaskTimedOutEventAttributes] : []));
    assert.deepEqual(timedOut.map((t) => t.failure?.timeoutFailureInfo?.timeoutType), [temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE], 'the hanging step timed out');
  });

  it('a model run whose model call hangs fails with "timed out" at RUN_TIMEOUT_MS, and the model call is aborted', async () => {
    models.script('m-hang', () => ({ ...textReply('too late'), delayMs: 120_000 }));
    const u = await registerUser(h.app);
    const agent = await api(h.app, u).post('/api/agents', { name: 'slow thinker', configJson: { model: 'm-hang' } });
    assert.equal(agent.statusCode, 201, agent.body);
    const runId = await startRun(u, agent.json().id, 'hi');

    const run = await finished(runId);
    assert.equal(run.status, 'failed');
    assert.equal(run.error, 'timed out');
    const took = run.finished_at!.getTime() - run.started_at!.getTime();
    assert.ok(took >= TIMEOUT_MS - 100 && took < TIMEOUT_MS + 2_000, `ended ${took} ms after it started`);
    // The step's activity learns of its time-out by its heartbeat and aborts the model call (the step's AbortSignal).
    await waitFor('the model call to be aborted', async () => models.callsFor('m-hang')[0]?.aborted, 10_000);
    assert.equal(models.callsFor('m-hang').length, 1, 'not retried');
    const { rows: steps } = await h.db.query(`SELECT type, finished_at FROM run_steps WHERE run_id = $1 ORDER BY step_index`, [runId]);
    assert.deepEqual(steps.map((st) => [st.type, st.finished_at !== null]), [['model', false]], 'a late answer is never recorded');

    // The hanging call was the run's first step, made in the activity that began the run (beginRunStep):
    // the run's time limit, its schedule-to-close, timed it out, and the run finished timed out (finishRun).
    const events = (await h.engine.client.workflow.getHandle(workflowIds.run(runId)).fetchHistory()).events ?? [];
    assert.deepEqual(events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []), ['beginRunStep', 'finishRun']);
    const timedOut = events.flatMap((e) => (e.activityTaskTimedOutEventAttributes ? [e.activityTaskTimedOutEventAttributes] : []));
    assert.deepEqual(timedOut.map((t) => t.failure?.timeoutFailureInfo?.timeoutType), [temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE], 'beginRunStep timed out');
  });

  it('a queued run whose workflow is late keeps its place; one silent for long is passed over, so it blocks nothing', async () => {
    const u = await registerUser(h.app);
    const agentId = await agentWithTool(u, '/order');
    // Two older runs whose workflows have not started yet, created just now: first in line.
    const late = [await queuedWithoutWorkflow(agentId, '0 seconds'), await queuedWithoutWorkflow(agentId, '0 seconds')];
    const young = await startRun(u, agentId, 'young');
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal((await createRunsRepository(h.db).findRun(young))!.status, 'queued', 'the younger run waits behind them');
    assert.equal(callsTo('/order').length, 0);

    // Their workflows start (a hand-off that was delayed): they run first, and their ends wake the young one.
    await withTransaction(h.db, async (tx) => {
      for (const run of late) await startRunWorkflow(tx, run, h.config.runs.timeoutMs);
    });
    h.engine.handOff.kick();
    for (const run of [...late.map((r) => r.id), young]) assert.equal((await finished(run)).status, 'succeeded');
    const calls = callsTo('/order').map((r) => JSON.parse(r.body));
    assert.equal(calls[0], 'late', 'a late run first');
    assert.deepEqual([...calls].sort(), ['late', 'late', 'young']);

    // Two queued runs whose workflows never started, silent for an hour: they don't hold the line.
    await queuedWithoutWorkflow(agentId, '1 hour');
    await queuedWithoutWorkflow(agentId, '1 hour');
    const next = await startRun(u, agentId, 'next');
    assert.equal((await finished(next)).status, 'succeeded');
  });

  it('a queued run of an agent paused before it started fails naming the status, without calling anything', async () => {
    const u = await registerUser(h.app);
    const busy = await agentWithTool(u, '/slow-busy');
    const paused = await agentWithTool(u, '/never');
    const holders = [await startRun(u, busy, 1), await startRun(u, busy, 2)];
    await waitFor('both slots taken', async () => callsTo('/slow-busy').length === 2, 15_000);
    const waiting = await startRun(u, paused, 'x');
    await waitFor('the run to wait in line', async () => (await h.db.query(`SELECT parked FROM runs WHERE id = $1`, [waiting])).rows[0].parked, 15_000);
    const patched = await api(h.app, u).patch(`/api/agents/${paused}`, { status: 'paused' });
    assert.equal(patched.statusCode, 200, patched.body);
    const refused = await api(h.app, u).post(`/api/agents/${paused}/runs`, {});
    assert.equal(refused.statusCode, 409);
    assert.deepEqual(refused.json(), { message: 'Agent is paused: paused agents cannot run; set another status first' });

    const run = await finished(waiting);
    for (const id of holders) assert.equal((await finished(id)).status, 'succeeded');
    assert.equal(run.status, 'failed');
    assert.match(run.error!, /^Agent is paused: the run did not start/);
    assert.equal(run.started_at, null);
    assert.equal(callsTo('/never').length, 0);
    const { rows } = await h.db.query(`SELECT data FROM events WHERE type = 'agent.failed' AND data ->> 'runId' = $1`, [waiting]);
    assert.equal(rows.length, 1);
  });
});
