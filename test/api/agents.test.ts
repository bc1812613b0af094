import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { readAllPages, registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

describe('agents (docs/api.md § Agents)', () => {
  const suite = suiteContext();
  let app: TestApp;

  before(async () => {
    ({ app } = await startTestApp(suite));
  });

  const balanceOf = async (user: TestUser) => (await api(app, user).get('/api/account')).json().balance as number;

  it('creates with defaults and charges 100 units in the ledger', async () => {
    const user = await registerUser(app);
    const res = await api(app, user).post('/api/agents', { name: 'Scout' });
    assert.equal(res.statusCode, 201);
    const agent = res.json();
    assert.match(agent.id, /^[0-9a-f-]{36}$/);
    assert.equal(agent.status, 'draft');
    assert.deepEqual(agent.memoryConfig, { type: 'conversation', maxMessages: 50, ttlMinutes: 1440 });
    assert.deepEqual(agent.policies, []);
    assert.deepEqual(agent.configJson, {});
    assert.deepEqual(agent.graph, { nodes: [], edges: [] });
    for (const f of ['description', 'goal', 'persona', 'voice', 'systemPrompt']) assert.equal(agent[f], '');
    assert.ok(!Number.isNaN(Date.parse(agent.createdAt)) && agent.createdAt.endsWith('Z'));
    assert.equal(await balanceOf(user), 900);
    const ledger = (await api(app, user).get('/api/account/transactions')).json();
    assert.deepEqual(ledger[0], { ...ledger[0], amount: -100, reason: 'agent.create', resourceId: agent.id, balanceAfter: 900 });
  });

  it('keeps every spec field as written', async () => {
    const user = await registerUser(app);
    const input = {
      name: 'Analyst', description: 'd', goal: 'g', persona: 'p', voice: 'calm', systemPrompt: '# Hello\n\nMarkdown',
      policies: ['be kind', { rule: 'no pii', severity: 'high' }], memoryConfig: { type: 'summary', maxMessages: 10, ttlMinutes: 60 },
      configJson: { model: 'x', nested: { a: [1, 2] } }, status: 'active',
    };
    const created = (await api(app, user).post('/api/agents', input)).json();
    const read = (await api(app, user).get(`/api/agents/${created.id}`)).json();
    for (const [k, v] of Object.entries(input)) assert.deepEqual(read[k], v, k);
  });

  it('creates templates for free', async () => {
    const user = await registerUser(app);
    assert.equal((await api(app, user).post('/api/agents', { name: 'T', status: 'template' })).statusCode, 201);
    assert.equal(await balanceOf(user), 1000);
  });

  it('answers 402 and writes nothing when the balance is short', async () => {
    const user = await registerUser(app);
    for (let i = 0; i < 10; i++) assert.equal((await api(app, user).post('/api/agents', { name: `a${i}` })).statusCode, 201);
    const res = await api(app, user).post('/api/agents', { name: 'one too many' });
    assert.equal(res.statusCode, 402);
    assert.deepEqual(res.json(), { message: 'Insufficient balance: this costs 100 units and the balance is 0' });
    assert.equal(await balanceOf(user), 0);
    assert.equal((await api(app, user).get('/api/agents?limit=200')).json().length, 10);
    // A template is still free at zero balance.
    assert.equal((await api(app, user).post('/api/agents', { name: 'tpl', status: 'template' })).statusCode, 201);
  });

  it('charges leaving template, and refuses (402, unchanged) when short', async () => {
    const user = await registerUser(app);
    const tpl = (await api(app, user).post('/api/agents', { name: 'T', status: 'template' })).json();
    const activated = await api(app, user).patch(`/api/agents/${tpl.id}`, { status: 'active' });
    assert.equal(activated.statusCode, 200);
    assert.equal(activated.json().status, 'active');
    assert.equal(await balanceOf(user), 900);
    // Other transitions are free, including back to template.
    for (const status of ['paused', 'draft', 'active', 'template']) {
      assert.equal((await api(app, user).put(`/api/agents/${tpl.id}`, { status })).statusCode, 200, status);
    }
    assert.equal(await balanceOf(user), 900);
    for (let i = 0; i < 9; i++) await api(app, user).post('/api/agents', { name: `a${i}` });
    assert.equal(await balanceOf(user), 0);
    const refused = await api(app, user).patch(`/api/agents/${tpl.id}`, { status: 'draft', name: 'renamed' });
    assert.equal(refused.statusCode, 402);
    assert.equal(refused.json().message, 'Insufficient balance: this costs 100 units and the balance is 0');
    const after = (await api(app, user).get(`/api/agents/${tpl.id}`)).json();
    assert.equal(after.status, 'template');
    assert.equal(after.name, 'T', 'nothing half-written');
  });

  it('updates partially with PUT and PATCH, merging memoryConfig', async () => {
    const user = await registerUser(app);
    const agent = (await api(app, user).post('/api/agents', { name: 'A', goal: 'keep me' })).json();
    const put = await api(app, user).put(`/api/agents/${agent.id}`, { persona: 'new persona', memoryConfig: { ttlMinutes: 5 } });
    assert.equal(put.statusCode, 200);
    assert.equal(put.json().goal, 'keep me');
    assert.equal(put.json().persona, 'new persona');
    assert.deepEqual(put.json().memoryConfig, { type: 'conversation', maxMessages: 50, ttlMinutes: 5 });
    const patch = await api(app, user).patch(`/api/agents/${agent.id}`, { name: 'B' });
    assert.equal(patch.json().name, 'B');
    assert.equal(patch.json().persona, 'new persona');
    assert.ok(Date.parse(patch.json().updatedAt) >= Date.parse(agent.updatedAt));
  });

  it('validates bodies with a message naming the field', async () => {
    const user = await registerUser(app);
    const cases: [unknown, RegExp][] = [
      [{}, /body\.name: is required/],
      [{ name: '' }, /body\.name/],
      [{ name: 'x'.repeat(201) }, /body\.name/],
      [{ name: 'x', status: 'deleted' }, /body\.status/],
      [{ name: 'x', memoryConfig: { type: 'telepathy' } }, /body\.memoryConfig\.type/],
      [{ name: 'x', memoryConfig: { ttlMinutes: 525601 } }, /body\.memoryConfig\.ttlMinutes/],
      [{ name: 'x', policies: 'not an array' }, /body\.policies/],
      [{ name: 'x', policies: Array.from({ length: 101 }, () => 'p') }, /body\.policies/],
      [{ name: 'x', systemPrompt: 'x'.repeat(100_001) }, /body\.systemPrompt/],
      [{ name: 'x', configJson: { blob: 'x'.repeat(70_000) } }, /body\.configJson/],
      [{ name: 'x', configJson: [] }, /body\.configJson/],
      [{ name: 'x', unknownField: 1 }, /unknownField/],
      [[], /body/],
    ];
    for (const [payload, message] of cases) {
      const res = await api(app, user).post('/api/agents', payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 80));
      assert.match(res.json().message, message);
    }
    const agent = (await api(app, user).post('/api/agents', { name: 'ok' })).json();
    const bad = await api(app, user).patch(`/api/agents/${agent.id}`, { memoryConfig: { maxMessages: 10_001 } });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /body\.memoryConfig\.maxMessages/);
    assert.equal(await balanceOf(user), 900, 'rejected requests charge nothing');
  });

  it('shows one account nothing of another: 404 on every item route, absent from lists', async () => {
    const owner = await registerUser(app);
    const stranger = await registerUser(app);
    const agent = (await api(app, owner).post('/api/agents', { name: 'private' })).json();
    for (const [method, url, body] of [
      ['GET', `/api/agents/${agent.id}`], ['PUT', `/api/agents/${agent.id}`, { name: 'x' }], ['PATCH', `/api/agents/${agent.id}`, { name: 'x' }],
      ['DELETE', `/api/agents/${agent.id}`], ['GET', `/api/agents/${agent.id}/graph`], ['PUT', `/api/agents/${agent.id}/graph`, { nodes: [], edges: [] }],
    ] as const) {
      const res = await api(app, stranger).request(method, url, body);
      assert.equal(res.statusCode, 404, `${method} ${url}`);
    }
    assert.deepEqual((await api(app, stranger).get('/api/agents')).json(), []);
    const still = (await api(app, owner).get(`/api/agents/${agent.id}`)).json();
    assert.equal(still.name, 'private');
  });

  it('deletes with 204, then 404', async () => {
    const user = await registerUser(app);
    const agent = (await api(app, user).post('/api/agents', { name: 'gone soon' })).json();
    const del = await api(app, user).delete(`/api/agents/${agent.id}`);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    assert.equal((await api(app, user).get(`/api/agents/${agent.id}`)).statusCode, 404);
    assert.equal((await api(app, user).delete(`/api/agents/${agent.id}`)).statusCode, 404);
  });

  it('stores the graph and refuses edges to missing nodes and repeated node ids', async () => {
    const user = await registerUser(app);
    const agent = (await api(app, user).post('/api/agents', { name: 'G' })).json();
    const graph = { nodes: [{ id: 'a', type: 'input' }, { id: 'b', type: 'llm', data: { model: 'm' } }], edges: [{ id: 'e1', source: 'a', target: 'b' }] };
    const put = await api(app, user).put(`/api/agents/${agent.id}/graph`, graph);
    assert.equal(put.statusCode, 200);
    assert.deepEqual(put.json(), graph);
    assert.deepEqual((await api(app, user).get(`/api/agents/${agent.id}/graph`)).json(), graph);
    assert.deepEqual((await api(app, user).get(`/api/agents/${agent.id}`)).json().graph, graph);

    const missing = await api(app, user).put(`/api/agents/${agent.id}/graph`, { nodes: [{ id: 'a', type: 'x' }], edges: [{ source: 'a', target: 'zzz' }] });
    assert.equal(missing.statusCode, 400);
    assert.match(missing.json().message, /edges\.0\.target.*zzz/);
    const dup = await api(app, user).put(`/api/agents/${agent.id}/graph`, { nodes: [{ id: 'a', type: 'x' }, { id: 'a', type: 'y' }], edges: [] });
    assert.equal(dup.statusCode, 400);
    assert.match(dup.json().message, /duplicate/);
    assert.deepEqual((await api(app, user).get(`/api/agents/${agent.id}/graph`)).json(), graph, 'unchanged after refusals');
  });

  it('pages newest first with a Link header until the end, without gaps or repeats', async () => {
    const user = await registerUser(app);
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await api(app, user).post('/api/agents', { name: `p${i}`, status: 'template' })).json().id);
    const { ids, pages } = await readAllPages(app, user, '/api/agents?limit=3');
    assert.equal(pages, 3);
    assert.deepEqual(ids, [...created].reverse());
  });
});

describe('a 402 says the price and the balance', () => {
  it('names both when the balance is short but not empty', async (t) => {
    const { app } = await startTestApp(t, { AGENT_CREATE_COST: '300' });
    const user = await registerUser(app);
    const create = () => api(app, user).post('/api/agents', { name: 'costly' });
    for (let i = 0; i < 3; i++) assert.equal((await create()).statusCode, 201);
    const refused = await create();
    assert.equal(refused.statusCode, 402);
    assert.deepEqual(refused.json(), { message: 'Insufficient balance: this costs 300 units and the balance is 100' });
  });
});
