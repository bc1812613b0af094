import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { readAllPages, registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';

const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed'];

/** Fire history and manual fires: `GET|POST /api/triggers/:id/fire(s)` and the same under user-triggers (docs/api.md § Triggers). */
describe('fires API', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let user: TestUser;
  let agentId: string;

  before(async () => {
    h = await startEngine(suite, __filename);
    user = await registerUser(h.app);
    agentId = (await api(h.app, user).post('/api/agents', { name: 'Fired', status: 'active' })).json().id;
  });

  const created = async (url: string, body: Record<string, unknown>) => {
    const res = await api(h.app, user).post(url, { name: 'T', type: 'webhook', ...body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  const fire = async (url: string, body?: unknown, headers?: Record<string, string>) => {
    const res = await api(h.app, user).post(`${url}/fire`, body, headers);
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(Object.keys(res.json()), ['fireId']);
    return res.json().fireId as string;
  };
  const fires = async (url: string) => {
    const res = await api(h.app, user).get(`${url}/fires`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const recorded = (fireId: string) =>
    waitFor(`fire ${fireId}`, async () => (await h.db.query(`SELECT * FROM fires WHERE id = $1`, [fireId])).rows[0], 30_000);

  it('fires a user trigger now: the fire is recorded, counted and listed', async () => {
    const url = `/api/user-triggers/${await created('/api/user-triggers', {})}`;
    assert.deepEqual(await fires(url), []);
    const fireId = await fire(url, { payload: { x: [1] } });
    const row = await recorded(fireId);
    assert.deepEqual(row.payload, { x: [1] });

    const trigger = (await api(h.app, user).get(url)).json();
    assert.equal(trigger.fireCount, 1);
    assert.ok(trigger.lastFired);
    const list = await fires(url);
    assert.deepEqual(list, [{ id: fireId, firedAt: row.created_at.toISOString(), source: 'manual', runId: null, status: 'fired', reason: null, scheduledAt: null }]);
    // Not linked to an agent: trigger.fired is emitted.
    const { rows } = await h.db.query(`SELECT type FROM events WHERE data->>'fireId' = $1`, [fireId]);
    assert.deepEqual(rows, [{ type: 'trigger.fired' }]);
  });

  it('fires an agent trigger: the fire starts a run and shows its status', async () => {
    const url = `/api/triggers/${await created(`/api/agents/${agentId}/triggers`, {})}`;
    // No body at all fires with payload null.
    const fireId = await fire(url);
    const row = await recorded(fireId);
    assert.ok(row.run_id, 'a run was started');
    const { rows: runs } = await h.db.query(`SELECT id, agent_id, fire_id, input FROM runs WHERE id = $1`, [row.run_id]);
    assert.deepEqual(runs[0].input, { source: 'manual', triggerId: url.split('/').pop(), fireId, payload: null });
    assert.equal(runs[0].agent_id, agentId);

    const [listed] = await fires(url);
    assert.equal(listed.id, fireId);
    assert.equal(listed.source, 'manual');
    assert.equal(listed.runId, row.run_id);
    assert.ok(RUN_STATUSES.includes(listed.status), listed.status);
    // The listed status is the run's (compared until both reads fall between two of the run's transitions).
    await waitFor('the listed status to match the run', async () => {
      const { rows: run } = await h.db.query(`SELECT status FROM runs WHERE id = $1`, [row.run_id]);
      return (await fires(url))[0].status === run[0].status;
    }, 10_000);
  });

  it('records an event fire of a trigger disabled before it ran as skipped, uncounted', async () => {
    const triggerId = await created('/api/user-triggers', { type: 'event', configJson: { eventType: 'agent.created' } });
    const url = `/api/user-triggers/${triggerId}`;
    await h.stopWorker();
    try {
      // The event's fan-out queues the trigger's fire; the trigger is disabled before a worker runs it.
      assert.equal((await api(h.app, user).post('/api/agents', { name: 'causes a fire' })).statusCode, 201);
      const res = await api(h.app, user).patch(url, { enabled: false });
      assert.equal(res.statusCode, 200, res.body);
    } finally {
      await h.startWorker();
    }
    const row = await waitFor('the fire', async () => (await h.db.query(`SELECT * FROM fires WHERE trigger_id = $1`, [triggerId])).rows[0], 30_000);
    const [listed] = await fires(url);
    assert.deepEqual({ id: listed.id, status: listed.status, reason: listed.reason, runId: listed.runId }, { id: row.id, status: 'skipped', reason: 'trigger_disabled', runId: null });
    assert.equal((await api(h.app, user).get(`${url}/fires/${row.id}`)).json().reason, 'trigger_disabled');
    assert.equal((await api(h.app, user).get(url)).json().fireCount, 0);
  });

  it('records a fire of a trigger linked to a template or paused agent as skipped: no run, uncounted', async () => {
    for (const status of ['template', 'paused']) {
      const agent = (await api(h.app, user).post('/api/agents', { name: `A ${status}`, status })).json().id as string;
      const agentTrigger = `/api/triggers/${await created(`/api/agents/${agent}/triggers`, {})}`;
      const userTrigger = `/api/user-triggers/${await created('/api/user-triggers', { agentId: agent })}`;
      for (const url of [agentTrigger, userTrigger]) {
        const fireId = await fire(url, { payload: 'free work?' });
        const row = await recorded(fireId);
        assert.deepEqual({ status: row.status, run_id: row.run_id }, { status: 'skipped', run_id: null }, `${status} ${url}`);
        const [listed] = await fires(url);
        assert.deepEqual(
          { id: listed.id, status: listed.status, reason: listed.reason, runId: listed.runId },
          { id: fireId, status: 'skipped', reason: `agent_${status}`, runId: null },
        );
        assert.equal((await api(h.app, user).get(url)).json().fireCount, 0);
        const { rows: events } = await h.db.query(`SELECT type FROM events WHERE data->>'fireId' = $1`, [fireId]);
        assert.deepEqual(events, [], 'a skipped fire emits nothing');
      }
      const { rows: runs } = await h.db.query(`SELECT id FROM runs WHERE agent_id = $1`, [agent]);
      assert.deepEqual(runs, [], `no run of the ${status} agent`);
    }
  });

  it('refuses to fire a disabled trigger (409) and a bad body (400)', async () => {
    const url = `/api/user-triggers/${await created('/api/user-triggers', { enabled: false })}`;
    const res = await api(h.app, user).post(`${url}/fire`, {});
    assert.equal(res.statusCode, 409, res.body);
    assert.deepEqual(Object.keys(res.json()), ['message']);

    const enabled = `/api/user-triggers/${await created('/api/user-triggers', {})}`;
    for (const body of [{ payload: 1, extra: true }, [1]]) {
      const bad = await api(h.app, user).post(`${enabled}/fire`, body);
      assert.equal(bad.statusCode, 400, bad.body);
      assert.deepEqual(Object.keys(bad.json()), ['message']);
    }
    const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM outbox WHERE payload->>'workflowId' LIKE $1`, [`fire:%${url.split('/').pop()}%`]);
    assert.equal(rows[0].n, 0);
  });

  it('answers 404 for another account, the other trigger API, an unknown or malformed id', async () => {
    const userTrigger = await created('/api/user-triggers', {});
    const agentTrigger = await created(`/api/agents/${agentId}/triggers`, {});
    const stranger = await registerUser(h.app);
    const cases: [string, TestUser][] = [
      [`/api/user-triggers/${userTrigger}`, stranger],
      [`/api/triggers/${agentTrigger}`, stranger],
      [`/api/triggers/${userTrigger}`, user],
      [`/api/user-triggers/${agentTrigger}`, user],
      [`/api/triggers/${randomUUID()}`, user],
      ['/api/user-triggers/not-a-uuid', user],
    ];
    for (const [url, who] of cases) {
      for (const [method, path] of [['GET', `${url}/fires`], ['POST', `${url}/fire`]] as const) {
        const res = await api(h.app, who).request(method, path, method === 'POST' ? {} : undefined);
        assert.equal(res.statusCode, 404, `${method} ${path}: ${res.body}`);
        assert.deepEqual(Object.keys(res.json()), ['message']);
      }
    }
    const unauthenticated = await api(h.app).post(`/api/user-triggers/${userTrigger}/fire`, {});
    assert.equal(unauthenticated.statusCode, 401);
    const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM fires WHERE trigger_id = ANY($1)`, [[userTrigger, agentTrigger]]);
    assert.equal(rows[0].n, 0);
  });

  it('shows one fire with its payload (a webhook trigger\'s hook body too); 404 for another account\'s, trigger\'s or an unknown fire', async () => {
    const res = await api(h.app, user).post('/api/user-triggers', { name: 'Hooked', type: 'webhook' });
    assert.equal(res.statusCode, 201, res.body);
    const { id, configJson } = res.json();
    const url = `/api/user-triggers/${id}`;
    const hooked = await api(h.app).post(`/api/hooks/triggers/${configJson.webhookPath}`, { order: 42 }, { 'x-trigger-token': configJson.secretToken });
    assert.equal(hooked.statusCode, 202, hooked.body);
    const { fireId } = hooked.json();
    const row = await recorded(fireId);

    const shown = await api(h.app, user).get(`${url}/fires/${fireId}`);
    assert.equal(shown.statusCode, 200, shown.body);
    assert.deepEqual(shown.json(), {
      id: fireId, firedAt: row.created_at.toISOString(), source: 'webhook', runId: null, status: 'fired', reason: null, scheduledAt: null, payload: { order: 42 },
    });
    // A manual fire without a payload shows null.
    const manual = await fire(url);
    await recorded(manual);
    assert.equal((await api(h.app, user).get(`${url}/fires/${manual}`)).json().payload, null);

    const other = `/api/user-triggers/${await created('/api/user-triggers', {})}`;
    const stranger = await registerUser(h.app);
    const cases: [string, TestUser][] = [
      [`${url}/fires/${fireId}`, stranger],
      [`/api/triggers/${id}/fires/${fireId}`, user],
      [`${other}/fires/${fireId}`, user],
      [`${url}/fires/${randomUUID()}`, user],
      [`${url}/fires/not-a-uuid`, user],
    ];
    for (const [path, who] of cases) {
      const missing = await api(h.app, who).get(path);
      assert.equal(missing.statusCode, 404, `${path}: ${missing.body}`);
      assert.deepEqual(Object.keys(missing.json()), ['message']);
    }
  });

  it('pages the history newest first with Link rel=next; an Idempotency-Key fires once', async () => {
    const url = `/api/user-triggers/${await created('/api/user-triggers', {})}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await fire(url, { payload: i }));
    const again = await fire(url, { payload: 'once' }, { 'idempotency-key': 'fire-once' });
    assert.equal(await fire(url, { payload: 'once' }, { 'idempotency-key': 'fire-once' }), again);
    ids.push(again);
    for (const id of ids) await recorded(id);

    const all = await readAllPages(h.app, user, `${url}/fires?limit=2`);
    assert.deepEqual(all.sizes, [2, 2, 2]);
    assert.deepEqual(new Set(all.ids), new Set(ids));
    const times = (all.items as unknown as { firedAt: string }[]).map((f) => f.firedAt);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
    assert.equal((await api(h.app, user).get(url)).json().fireCount, 6);
  });
});
