import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { maskSecret } from '../../lib/secrets';
import { api } from '../helpers/api';
import { readAllPages, registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { testSecretBox } from '../helpers/config';

/** Standalone user triggers: /api/user-triggers and /api/user-triggers/:id (docs/api.md § Triggers). */
describe('user triggers', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let user: TestUser;
  let stranger: TestUser;
  let agent: string;
  let strangerAgent: string;

  const newAgent = async (who: TestUser) => (await api(app, who).post('/api/agents', { name: 'Agent', status: 'template' })).json().id as string;
  const create = async (who: TestUser, body: Record<string, unknown>) => {
    const res = await api(app, who).post('/api/user-triggers', { name: 'U', ...body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const NOT_IN_ACCOUNT = { message: 'body.agentId: no agent with this id in your account' };
  const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

  before(async () => {
    ({ app, db } = await startTestApp(suite));
    user = await registerUser(app);
    stranger = await registerUser(app);
    agent = await newAgent(user);
    strangerAgent = await newAgent(stranger);
  });

  it('creates unlinked or linked to an agent of the account, with every type\'s defaults', async () => {
    const accountId = (await api(app, user).get('/api/account')).json().id;
    const unlinked = await create(user, { type: 'event', configJson: { eventType: 'trigger.fired' } });
    assert.equal(unlinked.agentId, null);
    assert.equal(unlinked.accountId, accountId);
    assert.deepEqual(unlinked.configJson, { eventType: 'trigger.fired', eventFilter: {} });
    assert.equal(unlinked.fireCount, 0);
    assert.equal(unlinked.lastFired, null);
    assert.equal(unlinked.nextFireAt, null);
    assert.equal(unlinked.hookUrl, null);
    const explicitNull = await create(user, { type: 'agent_finished', agentId: null });
    assert.equal(explicitNull.agentId, null);
    assert.deepEqual(explicitNull.configJson, { eventType: 'agent.completed', eventFilter: {} });

    const linked = await create(user, { type: 'schedule', agentId: agent, configJson: { cronExpression: '*/10 * * * *', timezone: 'Australia/Sydney' } });
    assert.equal(linked.agentId, agent);
    assert.deepEqual(linked.configJson, { cronExpression: '*/10 * * * *', timezone: 'Australia/Sydney', overlapPolicy: 'skip', catchupWindow: '1h' });
    const next = Date.parse(linked.nextFireAt);
    assert.equal(next % 600_000, 0);
    assert.ok(next > Date.now() - 1000 && next <= Date.now() + 600_000);
    const hook = await create(user, { type: 'webhook', agentId: agent });
    assert.match(hook.configJson.webhookPath, /^[0-9a-f]{24}$/);
    assert.equal(hook.hookUrl, `http://localhost:3000/api/hooks/triggers/${hook.configJson.webhookPath}`);
    const output = await create(user, { type: 'agent_output', configJson: { eventFilter: { 'output.score': 10 } } });
    assert.deepEqual(output.configJson, { eventType: 'agent.completed', eventFilter: { 'output.score': 10 } });
    for (const t of [unlinked, explicitNull, linked, output]) {
      const read = (await api(app, user).get(`/api/user-triggers/${t.id}`)).json();
      assert.deepEqual(read, t);
    }
  });

  it('refuses an agentId outside the account, and invalid configs', async () => {
    const cases: [Record<string, unknown>, number, unknown][] = [
      [{ type: 'webhook', agentId: strangerAgent }, 400, NOT_IN_ACCOUNT],
      [{ type: 'webhook', agentId: UNKNOWN_ID }, 400, NOT_IN_ACCOUNT],
      [{ type: 'webhook', agentId: 'not-a-uuid' }, 400, /^body\.agentId:/],
      [{ type: 'webhook', agentId: 42 }, 400, /^body\.agentId:/],
      [{ type: 'cron', configJson: { cronExpression: '0 9 * * *', timezone: 'Mars/Base' } }, 400, { message: 'body.configJson.timezone: unknown IANA time zone "Mars/Base"' }],
      [{ type: 'cron', configJson: { cronExpression: 'every day' } }, 400, /^body\.configJson\.cronExpression: /],
      [{ type: 'event', configJson: { eventType: 'agent.created', eventFilter: { name: { $regex: '*' } } } }, 400, /^body\.configJson\.eventFilter\.name\.\$regex: invalid or unsupported regular expression \(RE2 syntax/],
      [{ type: 'webhook', configJson: { webhookPath: 'NO' } }, 400, /^body\.configJson\.webhookPath:/],
      [{ type: 'webhook', name: '' }, 400, /^body\.name:/],
    ];
    for (const [body, status, expected] of cases) {
      const res = await api(app, user).post('/api/user-triggers', { name: 'x', ...body });
      assert.equal(res.statusCode, status, `${JSON.stringify(body)} → ${res.body}`);
      if (expected instanceof RegExp) assert.match(res.json().message, expected);
      else assert.deepEqual(res.json(), expected);
    }
    const names = (await api(app, user).get('/api/user-triggers?limit=200')).json().map((t: { name: string }) => t.name);
    assert.ok(!names.includes('x'), 'nothing created');
  });

  it('links, relinks and unlinks with agentId in an update', async () => {
    const other = await newAgent(user);
    const t = await create(user, { type: 'agent_finished' });
    for (const [method, agentId] of [['PATCH', agent], ['PUT', other]] as const) {
      const res = await api(app, user).request(method, `/api/user-triggers/${t.id}`, { agentId });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().agentId, agentId);
    }
    for (const agentId of [strangerAgent, UNKNOWN_ID]) {
      const refused = await api(app, user).patch(`/api/user-triggers/${t.id}`, { agentId, name: 'not applied' });
      assert.deepEqual([refused.statusCode, refused.json()], [400, NOT_IN_ACCOUNT]);
    }
    const kept = (await api(app, user).get(`/api/user-triggers/${t.id}`)).json();
    assert.equal(kept.agentId, other);
    assert.equal(kept.name, 'U');
    // Fields left out keep their link.
    assert.equal((await api(app, user).patch(`/api/user-triggers/${t.id}`, { name: 'renamed' })).json().agentId, other);
    const unlinked = await api(app, user).patch(`/api/user-triggers/${t.id}`, { agentId: null });
    assert.equal(unlinked.statusCode, 200);
    assert.equal(unlinked.json().agentId, null);
    assert.equal(unlinked.json().name, 'renamed');
    assert.equal((await api(app, user).get(`/api/user-triggers/${t.id}`)).json().agentId, null);
  });

  it('updates partially with a merge patch, and replaces the config on a type change', async () => {
    const t = await create(user, { type: 'event', configJson: { eventType: 'agent.created', eventFilter: { 'data.status': 'active', kind: 'x' } } });
    const merged = (await api(app, user).patch(`/api/user-triggers/${t.id}`, { configJson: { eventFilter: { kind: null } }, enabled: false })).json();
    assert.deepEqual(merged.configJson, { eventType: 'agent.created', eventFilter: { 'data.status': 'active' } });
    assert.equal(merged.enabled, false);
    const put = (await api(app, user).put(`/api/user-triggers/${t.id}`, { configJson: { eventType: 'agent.updated' } })).json();
    assert.deepEqual(put.configJson, { eventType: 'agent.updated', eventFilter: { 'data.status': 'active' } });
    assert.equal(put.enabled, false);

    const missing = await api(app, user).patch(`/api/user-triggers/${t.id}`, { type: 'cron' });
    assert.equal(missing.statusCode, 400);
    const cron = (await api(app, user).patch(`/api/user-triggers/${t.id}`, { type: 'cron', enabled: true, configJson: { cronExpression: '@every 30s' } })).json();
    assert.deepEqual(cron.configJson, { cronExpression: '@every 30s', timezone: 'UTC', overlapPolicy: 'skip', catchupWindow: '1h' });
    assert.equal(Date.parse(cron.nextFireAt) % 30_000, 0);
  });

  it('masks the secretToken after the setting response and keeps it when the mask is sent back', async () => {
    const token = 'user-trigger-token-QQQQ-9999';
    const t = await create(user, { type: 'webhook', configJson: { secretToken: token } });
    assert.equal(t.configJson.secretToken, token);
    const masked = maskSecret(token);
    assert.equal((await api(app, user).get(`/api/user-triggers/${t.id}`)).json().configJson.secretToken, masked);
    const listed = (await api(app, user).get('/api/user-triggers?limit=200')).json().find((x: { id: string }) => x.id === t.id);
    assert.equal(listed.configJson.secretToken, masked);
    const echoed = await api(app, user).put(`/api/user-triggers/${t.id}`, { configJson: { secretToken: masked, webhookPath: 'user-hook-path' } });
    assert.equal(echoed.statusCode, 200, echoed.body);
    assert.deepEqual(echoed.json().configJson, { webhookPath: 'user-hook-path', secretToken: masked });
    const { rows } = await db.query<{ sealed: string; raw: string }>(
      `SELECT config_json ->> 'secretToken' AS sealed, config_json::text AS raw FROM triggers WHERE id = $1`,
      [t.id],
    );
    assert.equal(testSecretBox.open(rows[0]!.sealed), token);
    assert.ok(!rows[0]!.raw.includes(token));
  });

  it('keeps webhook paths unique against agent triggers of other accounts', async () => {
    await create(user, { type: 'webhook', configJson: { webhookPath: 'only-once' } });
    const clash = await api(app, stranger).post(`/api/agents/${strangerAgent}/triggers`, { type: 'webhook', name: 'w', configJson: { webhookPath: 'only-once' } });
    assert.deepEqual([clash.statusCode, clash.json()], [409, { message: 'body.configJson.webhookPath: is already in use' }]);
    const mine = await create(stranger, { type: 'webhook' });
    const patched = await api(app, stranger).patch(`/api/user-triggers/${mine.id}`, { configJson: { webhookPath: 'only-once' } });
    assert.deepEqual([patched.statusCode, patched.json()], [409, { message: 'body.configJson.webhookPath: is already in use' }]);
  });

  it('survives its agent, unlinked, while the agent\'s own triggers go', async () => {
    const doomed = await newAgent(user);
    const linked = await create(user, { type: 'webhook', agentId: doomed, configJson: { webhookPath: 'survivor-hook' } });
    const own = (await api(app, user).post(`/api/agents/${doomed}/triggers`, { type: 'agent_finished', name: 'child' })).json();
    assert.equal((await api(app, user).delete(`/api/agents/${doomed}`)).statusCode, 204);
    assert.equal((await api(app, user).get(`/api/triggers/${own.id}`)).statusCode, 404);
    const survivor = await api(app, user).get(`/api/user-triggers/${linked.id}`);
    assert.equal(survivor.statusCode, 200);
    assert.equal(survivor.json().agentId, null);
    assert.equal(survivor.json().configJson.webhookPath, 'survivor-hook');
    assert.equal(survivor.json().hookUrl, 'http://localhost:3000/api/hooks/triggers/survivor-hook');
    // Relinking to the deleted agent is refused like any unknown agent.
    const relink = await api(app, user).patch(`/api/user-triggers/${linked.id}`, { agentId: doomed });
    assert.deepEqual([relink.statusCode, relink.json()], [400, NOT_IN_ACCOUNT]);
  });

  it('keeps the two kinds apart: each item route and list sees only its own', async () => {
    const userTrigger = await create(user, { type: 'agent_finished', agentId: agent });
    const agentTrigger = (await api(app, user).post(`/api/agents/${agent}/triggers`, { type: 'agent_finished', name: 'A' })).json();
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const body = method === 'PUT' || method === 'PATCH' ? { name: 'crossed' } : undefined;
      assert.equal((await api(app, user).request(method, `/api/triggers/${userTrigger.id}`, body)).statusCode, 404, `${method} user trigger as agent trigger`);
      assert.equal((await api(app, user).request(method, `/api/user-triggers/${agentTrigger.id}`, body)).statusCode, 404, `${method} agent trigger as user trigger`);
    }
    const userList = (await api(app, user).get('/api/user-triggers?limit=200')).json().map((t: { id: string }) => t.id);
    assert.ok(userList.includes(userTrigger.id) && !userList.includes(agentTrigger.id));
    const agentList = (await api(app, user).get(`/api/agents/${agent}/triggers?limit=200`)).json().map((t: { id: string }) => t.id);
    assert.ok(agentList.includes(agentTrigger.id) && !agentList.includes(userTrigger.id));
    assert.equal((await api(app, user).get(`/api/user-triggers/${userTrigger.id}`)).json().name, 'U');
  });

  it('deletes with 204, then 404', async () => {
    const t = await create(user, { type: 'webhook' });
    const del = await api(app, user).delete(`/api/user-triggers/${t.id}`);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    assert.equal((await api(app, user).get(`/api/user-triggers/${t.id}`)).statusCode, 404);
    assert.equal((await api(app, user).delete(`/api/user-triggers/${t.id}`)).statusCode, 404);
    assert.equal((await api(app, user).get('/api/user-triggers/not-a-uuid')).statusCode, 404);
  });

  it('pages newest first with a Link header', async () => {
    const pager = await registerUser(app);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await create(pager, { type: 'agent_finished', name: `p${i}` })).id);
    const { ids, pages, links } = await readAllPages(app, pager, '/api/user-triggers?limit=2');
    for (const next of links) {
      assert.equal(`${next.origin}${next.pathname}`, 'http://localhost:3000/api/user-triggers');
      assert.equal(next.searchParams.get('limit'), '2');
      assert.ok(next.searchParams.get('cursor'));
    }
    assert.equal(pages, 3);
    assert.deepEqual(ids, [...created].reverse());
    assert.equal((await api(app, pager).get('/api/user-triggers?cursor=garbage')).statusCode, 400);
  });

  it('shows another account nothing: 404 on every item route, nothing in its list', async () => {
    const t = await create(user, { type: 'webhook', agentId: agent });
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const body = method === 'PUT' || method === 'PATCH' ? { name: 'stolen', agentId: null } : undefined;
      const res = await api(app, stranger).request(method, `/api/user-triggers/${t.id}`, body);
      assert.deepEqual([res.statusCode, res.json()], [404, { message: 'Trigger not found' }], method);
    }
    const theirs = (await api(app, stranger).get('/api/user-triggers?limit=200')).json();
    assert.ok(theirs.every((x: { accountId: string; id: string }) => x.id !== t.id && x.accountId !== t.accountId));
    const still = (await api(app, user).get(`/api/user-triggers/${t.id}`)).json();
    assert.equal(still.name, 'U');
    assert.equal(still.agentId, agent);
    assert.equal((await api(app).get('/api/user-triggers')).statusCode, 401);
  });
});
