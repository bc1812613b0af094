import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { joinWorkspace } from '../helpers/workspaces';

/**
 * POST /api/runs/:id/cancel through the whole engine: a running run's step in flight is torn down, no
 * further step is made, and the run ends failed ("the run was cancelled") with agent.failed; a run
 * parked in its account's line (no workflow yet) ends so at once, without ever running; an ended run is
 * a 409; a viewer is refused (403), another account's run is not found (404).
 */
describe('cancelling a run', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let tools: Receiver;
  let owner: TestUser;

  before(async () => {
    // /slow holds its answer far longer than the test waits; /next answers at once.
    tools = await startReceiver(suite, (req) => (req.url === '/slow' ? { body: { slow: true }, delayMs: 60_000 } : { body: { next: true } }));
    // One run of an account at a time: a second run waits in line.
    h = await startEngine(suite, __filename, { RUN_CONCURRENCY_PER_ACCOUNT: '1' });
    owner = await registerUser(h.app);
  });

  async function slowAgent(name: string): Promise<string> {
    const agent = await api(h.app, owner).ok('POST', '/api/agents', { name });
    await api(h.app, owner).ok('POST', `/api/agents/${agent.id}/tools`, { type: 'custom', name: 'slow', configJson: { endpoint: `${tools.url}/slow`, method: 'GET' } });
    await api(h.app, owner).ok('POST', `/api/agents/${agent.id}/tools`, { type: 'custom', name: 'next', configJson: { endpoint: `${tools.url}/next`, method: 'GET' } });
    return agent.id;
  }

  const getRun = async (id: string) => (await api(h.app, owner).ok('GET', `/api/runs/${id}`)) as { id: string; status: string; error: string | null; startedAt: string | null };
  const ended = (id: string) =>
    waitFor(`run ${id} to end`, async () => {
      const run = await getRun(id);
      return (run.status === 'succeeded' || run.status === 'failed') && run;
    }, 30_000);
  const eventsOf = async (runId: string) =>
    (await h.db.query<{ type: string; data: Record<string, unknown> }>(`SELECT type, data FROM events WHERE data ->> 'runId' = $1 ORDER BY created_at`, [runId])).rows;

  it('a running run: the slow call is torn down, the next tool never called, failed with agent.failed; a parked run is failed at once', async (t) => {
    const agentId = await slowAgent('slow');
    const running = await api(h.app, owner).ok('POST', `/api/agents/${agentId}/runs`, {});
    await waitFor('the slow tool to be called', async () => tools.requests.some((r) => r.url === '/slow'), 30_000);

    // Behind it (RUN_CONCURRENCY_PER_ACCOUNT=1) a run is parked: it waits in Postgres, with no workflow.
    const waiting = await api(h.app, owner).ok('POST', `/api/agents/${agentId}/runs`, {});
    assert.equal((await h.db.query(`SELECT parked FROM runs WHERE id = $1`, [waiting.id])).rows[0].parked, true);
    const parked = await api(h.app, owner).post(`/api/runs/${waiting.id}/cancel`);
    assert.equal(parked.statusCode, 202, parked.body);
    assert.equal(parked.json().status, 'failed', 'a run without a workflow ends at once');
    assert.equal(parked.json().error, 'the run was cancelled');
    assert.equal(parked.json().startedAt, null);
    assert.deepEqual(
      (await eventsOf(waiting.id)).map((e) => [e.type, e.data]),
      [['agent.failed', { agentId, runId: waiting.id, error: 'the run was cancelled', chainDepth: 0 }]],
    );

    const asked = performance.now();
    const cancel = await api(h.app, owner).post(`/api/runs/${running.id}/cancel`);
    const answered = performance.now();
    assert.equal(cancel.statusCode, 202, cancel.body);
    assert.equal(cancel.json().id, running.id);
    assert.equal(cancel.json().status, 'running', 'the run as it stood when the cancel was asked for');
    const run = await ended(running.id);
    t.diagnostic(`cancel answered in ${Math.round(answered - asked)} ms; the run failed ${Math.round(performance.now() - asked)} ms after it was asked (polled every 200 ms)`);
    assert.equal(run.status, 'failed');
    assert.equal(run.error, 'the run was cancelled');
    await waitFor('the slow call to be torn down', async () => tools.requests.find((r) => r.url === '/slow')?.aborted === true, 10_000);
    assert.deepEqual(
      (await eventsOf(running.id)).map((e) => [e.type, e.data]),
      [['agent.failed', { agentId, runId: running.id, error: 'the run was cancelled', chainDepth: 0 }]],
    );

    // Steps stopped: the slow tool was called once, the next tool never; no step finished.
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(tools.requests.map((r) => r.url), ['/slow']);
    const steps = await api(h.app, owner).ok('GET', `/api/runs/${running.id}/steps`);
    assert.ok(steps.length > 0 && steps.every((s: { finishedAt: string | null }) => s.finishedAt === null), JSON.stringify(steps));

    // Ended: nothing to cancel.
    for (const id of [running.id, waiting.id]) {
      const again = await api(h.app, owner).post(`/api/runs/${id}/cancel`);
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().message, 'Run has ended (failed): only a queued, running or waiting run can be cancelled');
    }
  });

  it('a viewer is refused (403), another account gets 404, a malformed id 404', async () => {
    const agentId = await slowAgent('refused');
    const run = await api(h.app, owner).ok('POST', `/api/agents/${agentId}/runs`, {});
    const viewer = await joinWorkspace(h.app, owner, 'viewer');
    const refused = await api(h.app).post(`/api/runs/${run.id}/cancel`, undefined, viewer.headers);
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().message, 'The editor or admin role is required: viewers have read-only access to this account');
    const stranger = await registerUser(h.app);
    const hidden = await api(h.app, stranger).post(`/api/runs/${run.id}/cancel`);
    assert.equal(hidden.statusCode, 404);
    assert.equal(hidden.json().message, 'Run not found');
    assert.equal((await api(h.app, owner).post('/api/runs/not-a-uuid/cancel')).statusCode, 404);
    assert.notEqual((await getRun(run.id)).error, 'the run was cancelled');
    // The owner may: it ends cancelled.
    assert.equal((await api(h.app, owner).post(`/api/runs/${run.id}/cancel`)).statusCode, 202);
    assert.equal((await ended(run.id)).error, 'the run was cancelled');
  });
});
