import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { MAX_CHAIN_DEPTH } from '../../engine/contract';
import { api } from '../helpers/api';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';

interface RunRow {
  id: string;
  agent_id: string;
  trigger_id: string | null;
  fire_id: string | null;
  status: string;
  input: Record<string, unknown>;
  output: Record<string, unknown> | null;
  chain_depth: number;
}

/** agent_finished / agent_output triggers chain runs through events; the depth guard stops cycles. */
describe('agent chains', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let echo: Receiver;

  before(async () => {
    // Answers { label } with the label it was sent.
    echo = await startReceiver(suite, (req) => ({ body: { label: JSON.parse(req.body || '{}').label ?? null } }));
    h = await startEngine(suite, __filename);
  });

  async function createAgent(u: TestUser, name: string): Promise<string> {
    const res = await api(h.app, u).post('/api/agents', { name });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  async function createTrigger(u: TestUser, agentId: string, type: string, eventFilter: Record<string, unknown>): Promise<string> {
    const res = await api(h.app, u).post(`/api/agents/${agentId}/triggers`, { type, name: `${type} on ${agentId}`, configJson: { eventFilter } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  async function startRun(u: TestUser, agentId: string, input: unknown): Promise<string> {
    const res = await api(h.app, u).post(`/api/agents/${agentId}/runs`, { input });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().id;
  }

  /** Every run of these agents, shallowest first. */
  async function runsOf(agentIds: string[]): Promise<RunRow[]> {
    const { rows } = await h.db.query<RunRow>(
      `SELECT id, agent_id, trigger_id, fire_id, status, input, output, chain_depth FROM runs
       WHERE agent_id = ANY($1) ORDER BY chain_depth, created_at`,
      [agentIds],
    );
    return rows;
  }

  /** The fan-out of the run's finishing event, once it is complete: how many fires it made. */
  async function firesFromRun(runId: string): Promise<number> {
    const event = await waitFor(`the dispatched event of run ${runId}`, async () => {
      const { rows } = await h.db.query<{ dispatch_result: { fires: number } }>(
        `SELECT dispatch_result FROM events WHERE type = 'agent.completed' AND data ->> 'runId' = $1 AND dispatch_status = 'done'`,
        [runId],
      );
      return rows[0];
    }, 30_000);
    return event.dispatch_result.fires;
  }

  it('A → B: A finishing fires B\'s agent_finished trigger, which runs B at depth 1 with the event as input', async () => {
    const user = await registerUser(h.app);
    const a = await createAgent(user, 'A');
    const b = await createAgent(user, 'B');
    const triggerId = await createTrigger(user, b, 'agent_finished', { agentId: a });

    const runA = await startRun(user, a, { hello: 'chain' });
    const runB = await waitFor('B to run and finish', async () => {
      const rows = (await runsOf([b]));
      return rows.length === 1 && rows[0]!.status === 'succeeded' && rows[0];
    }, 30_000);

    assert.equal(runB.trigger_id, triggerId);
    assert.equal(runB.chain_depth, 1);
    assert.equal(runB.input.source, 'event');
    assert.equal(runB.input.triggerId, triggerId);
    assert.equal(runB.input.fireId, runB.fire_id);
    const payload = runB.input.payload as Record<string, unknown>;
    assert.equal(payload.agentId, a);
    assert.equal(payload.runId, runA);
    assert.equal(payload.chainDepth, 0);
    assert.deepEqual((payload.output as { input: unknown }).input, { hello: 'chain' });

    const { rows: fires } = await h.db.query(`SELECT id, run_id, source, chain_depth FROM fires WHERE trigger_id = $1`, [triggerId]);
    assert.equal(fires.length, 1);
    assert.deepEqual(fires[0], { id: runB.fire_id, run_id: runB.id, source: 'event', chain_depth: 1 });

    const trigger = (await api(h.app, user).get(`/api/triggers/${triggerId}`)).json();
    assert.equal(trigger.fireCount, 1);
    assert.ok(trigger.lastFired);

    const shown = (await api(h.app, user).get(`/api/runs/${runB.id}`)).json();
    assert.equal(shown.triggerId, triggerId);
    assert.equal(shown.fireId, runB.fire_id);
    assert.equal(shown.chainDepth, 1);

    // B's own completion matches no trigger (the filter names A): the chain ends there.
    assert.equal(await firesFromRun(runB.id), 0);
    assert.equal((await runsOf([a, b])).length, 2);
  });

  it(`A ↔ B: a cycle runs to depth ${MAX_CHAIN_DEPTH} and stops`, async () => {
    const user = await registerUser(h.app);
    const a = await createAgent(user, 'ping');
    const b = await createAgent(user, 'pong');
    await createTrigger(user, b, 'agent_finished', { agentId: a });
    await createTrigger(user, a, 'agent_finished', { agentId: b });

    await startRun(user, a, { round: 0 });
    const expected = MAX_CHAIN_DEPTH + 1;
    const deepest = await waitFor('the run at the maximum depth to finish', async () => {
      const rows = await runsOf([a, b]);
      return rows.find((r) => r.chain_depth >= MAX_CHAIN_DEPTH && r.status !== 'queued' && r.status !== 'running');
    }, 60_000);
    // Its event is dispatched to the end and makes no fire; nothing else is on its way.
    assert.equal(await firesFromRun(deepest.id), 0);
    await new Promise((r) => setTimeout(r, 1500)); // and the count stays put
    const runs = await runsOf([a, b]);
    assert.equal(runs.length, expected, `runs at depths ${runs.map((r) => r.chain_depth).join(',')}`);
    assert.deepEqual(runs.map((r) => r.chain_depth), [...Array(expected).keys()]);
    assert.deepEqual(runs.map((r) => r.agent_id), runs.map((_, i) => (i % 2 === 0 ? a : b)), 'A and B take turns');
    assert.ok(runs.every((r) => r.status === 'succeeded'));
    const { rows } = await h.db.query<{ max: number; fires: number }>(
      `SELECT max(f.chain_depth) AS max, count(*)::int AS fires FROM fires f JOIN triggers t ON t.id = f.trigger_id WHERE t.agent_id = ANY($1)`,
      [[a, b]],
    );
    assert.deepEqual(rows[0], { max: MAX_CHAIN_DEPTH, fires: MAX_CHAIN_DEPTH });
  });

  it('an agent_output trigger fires only when the output matches its filter', async () => {
    const user = await registerUser(h.app);
    const source = await createAgent(user, 'source');
    const follower = await createAgent(user, 'follower');
    const tool = await api(h.app, user).post(`/api/agents/${source}/tools`, {
        type: 'custom',
        name: 'probe',
        configJson: { endpoint: `${echo.url}/probe`, method: 'POST', bodyTemplate: '{"label": {{input.label}}}', responseMapping: { label: 'label' } },
      });
    assert.equal(tool.statusCode, 201, tool.body);
    const triggerId = await createTrigger(user, follower, 'agent_output', { 'tools.probe.result.label': { $contains: 'match' } });

    const miss = await startRun(user, source, { label: 'nothing here' });
    assert.equal(await firesFromRun(miss), 0, 'an output that does not match makes no fire');
    const hit = await startRun(user, source, { label: 'a match here' });
    assert.equal(await firesFromRun(hit), 1);

    const followed = await waitFor('the follower to run', async () => {
      const rows = (await runsOf([follower]));
      return rows.length > 0 && rows;
    }, 30_000);
    assert.equal(followed.length, 1);
    assert.equal(followed[0]!.trigger_id, triggerId);
    assert.equal(followed[0]!.chain_depth, 1);
    const payload = followed[0]!.input.payload as { runId: string; output: { tools: { probe: { result: { label: string } } } } };
    assert.equal(payload.runId, hit);
    assert.equal(payload.output.tools.probe.result.label, 'a match here');
  });
});
