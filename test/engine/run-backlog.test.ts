import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createRunsRepository } from '../../db/repositories/runs';
import { BACKLOG_PRIORITY, workflowIds } from '../../engine/temporal/names';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';

const PER_SECOND = 4;
const LIMIT = 2;
const RUNS = 12;

/**
 * An account's backlog is paced (engine/runs/run-line.ts): its parked runs get a workflow at most
 * RUN_BACKLOG_PER_SECOND (after a first RUN_CONCURRENCY_PER_ACCOUNT at once), at BACKLOG_PRIORITY, and
 * still all run, in created order. On the real engine, with runs of an agent without tools (done in
 * milliseconds: unpaced, the whole backlog would be through in well under a second).
 */
describe('run backlog: paced promotion at a lower priority', () => {
  const suite = suiteContext();
  let h: EngineHarness;

  before(async () => {
    h = await startEngine(suite, __filename, { RUN_CONCURRENCY_PER_ACCOUNT: String(LIMIT), RUN_BACKLOG_PER_SECOND: String(PER_SECOND) });
  });

  it(`parked runs get their workflow at most ${PER_SECOND} a second, below fresh work's priority, and all run in created order`, async () => {
    const u = await registerUser(h.app);
    const agent = await api(h.app, u).post('/api/agents', { name: 'quick' });
    assert.equal(agent.statusCode, 201, agent.body);
    const runs: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const res = await api(h.app, u).post(`/api/agents/${agent.json().id}/runs`, { input: { i } });
      assert.equal(res.statusCode, 202, res.body);
      runs.push(res.json().id);
    }
    const done = [];
    for (const id of runs) {
      done.push(
        await waitFor(`run ${id} to finish`, async () => {
          const run = await createRunsRepository(h.db).findRun(id);
          return (run?.status === 'succeeded' || run?.status === 'failed') && run;
        }, 30_000),
      );
    }
    assert.ok(done.every((r) => r.status === 'succeeded'), 'every run succeeded');
    const byStart = done.map((r, i) => ({ i, at: r.started_at!.getTime() })).sort((x, y) => x.at - y.at || x.i - y.i);
    assert.deepEqual(byStart.map((r) => Math.floor(r.i / LIMIT)), [...Array(RUNS).keys()].map((i) => Math.floor(i / LIMIT)), 'started in created order');

    // Each workflow's start: when the hand-off started it, and at which priority.
    const starts = new Map<string, { at: number; priorityKey: number }>();
    for (const id of runs) {
      const history = await h.engine.client.workflow.getHandle(workflowIds.run(id)).fetchHistory();
      const started = history.events?.[0];
      const attrs = started?.workflowExecutionStartedEventAttributes;
      assert.ok(attrs, `run ${id}: no start event`);
      const seconds = Number(started!.eventTime?.seconds ?? 0);
      starts.set(id, { at: seconds * 1000 + Math.floor((started!.eventTime?.nanos ?? 0) / 1e6), priorityKey: attrs.priority?.priorityKey ?? 0 });
    }
    // The first runs start at once, at the default priority; the ones parked (the account's line was full) at BACKLOG_PRIORITY.
    for (const id of runs.slice(0, LIMIT)) assert.ok([0, 3].includes(starts.get(id)!.priorityKey), `fresh run ${id} started at priority ${starts.get(id)!.priorityKey}`);
    const { rows: wereParked } = await h.db.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND parked`, [runs]);
    assert.equal(wereParked[0].n, 0, 'no run is left parked');
    const backlog = runs.filter((id) => starts.get(id)!.priorityKey === BACKLOG_PRIORITY);
    const others = runs.filter((id) => !backlog.includes(id));
    assert.ok(others.every((id) => [0, 3].includes(starts.get(id)!.priorityKey)), 'every other run at the default priority');
    assert.ok(backlog.length >= RUNS / 2, `only ${backlog.length} of ${RUNS} runs came from the backlog (at priority ${BACKLOG_PRIORITY})`);
    // The first LIMIT promotions may go at once; the others one per 1/PER_SECOND s at most.
    const promoted = backlog.map((id) => starts.get(id)!.at).sort((a, b) => a - b);
    const span = promoted[promoted.length - 1]! - promoted[0]!;
    const atLeast = ((promoted.length - LIMIT) / PER_SECOND) * 1000 * 0.9;
    assert.ok(span >= atLeast, `${promoted.length} parked runs were promoted within ${span} ms: not paced (at least ${atLeast.toFixed(0)} ms expected)`);
  });
});
