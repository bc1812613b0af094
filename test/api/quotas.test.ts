import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

/**
 * docs/api.md § Quotas and charges: a create over a quota answers 403 { message } naming it and writes nothing, also
 * when many creates race (each count-and-insert is serialised per account or per agent).
 */
describe('quotas', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  const QUOTAS = { QUOTA_TRIGGERS: '4', QUOTA_WEBHOOKS: '3', QUOTA_TOOLS_PER_AGENT: '3', QUOTA_CONNECTORS_PER_AGENT: '2' };

  before(async () => {
    ({ app, db } = await startTestApp(suite, QUOTAS));
  });

  const newAgent = async (user: TestUser) => (await api(app, user).post('/api/agents', { name: 'Host', status: 'template' })).json().id as string;
  const count = async (table: string, column: string, id: string) =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${column} = $1`, [id])).rows[0]!.n);
  const accountOf = async (user: TestUser) => (await api(app, user).get('/api/account')).json().id as string;

  const webhook = (i: number) => ({ name: `w${i}`, url: 'https://93.184.215.14/hook' });
  const tool = (i: number) => ({ type: 'coin_prices', name: `t${i}`, configJson: { coinIds: ['bitcoin'] } });
  const connector = (i: number) => ({ type: 'telegram', name: `c${i}`, configJson: { botToken: `telegram-token-${i}` } });
  const trigger = (i: number) => ({ type: 'cron', name: `tr${i}`, configJson: { cronExpression: '0 * * * *' } });

  /** Creates up to the quota, then checks the next create is refused with `message` and writes nothing. */
  async function fillThenRefuse(user: TestUser, url: string, body: (i: number) => unknown, quota: number, message: string, counted: () => Promise<number>) {
    for (let i = 0; i < quota; i++) {
      const res = await api(app, user).post(url, body(i));
      assert.equal(res.statusCode, 201, res.body);
    }
    const refused = await api(app, user).post(url, body(quota));
    assert.equal(refused.statusCode, 403, refused.body);
    assert.deepEqual(refused.json(), { message });
    assert.equal(await counted(), quota, 'nothing written');
  }

  it('refuses the webhook over QUOTA_WEBHOOKS per account, and frees a place on delete', async () => {
    const user = await registerUser(app);
    const account = await accountOf(user);
    await fillThenRefuse(user, '/api/webhooks', webhook, 3, 'at most 3 webhooks per account', () => count('webhooks', 'account_id', account));
    // Incoming webhooks count too.
    const incoming = await api(app, user).post('/api/webhooks', { name: 'in', direction: 'incoming' });
    assert.equal(incoming.statusCode, 403);

    const first = (await api(app, user).get('/api/webhooks')).json()[0].id;
    assert.equal((await api(app, user).delete(`/api/webhooks/${first}`)).statusCode, 204);
    assert.equal((await api(app, user).post('/api/webhooks', webhook(9))).statusCode, 201);

    // Another account has its own budget.
    const other = await registerUser(app);
    assert.equal((await api(app, other).post('/api/webhooks', webhook(0))).statusCode, 201);
  });

  it('counts agent triggers and user triggers together against QUOTA_TRIGGERS', async () => {
    const user = await registerUser(app);
    const account = await accountOf(user);
    const agentA = await newAgent(user);
    const agentB = await newAgent(user);
    for (const url of [`/api/agents/${agentA}/triggers`, `/api/agents/${agentB}/triggers`, '/api/user-triggers']) {
      assert.equal((await api(app, user).post(url, trigger(0))).statusCode, 201);
    }
    const linked = await api(app, user).post('/api/user-triggers', { ...trigger(1), agentId: agentA });
    assert.equal(linked.statusCode, 201, linked.body);
    for (const url of [`/api/agents/${agentA}/triggers`, '/api/user-triggers']) {
      const refused = await api(app, user).post(url, trigger(2));
      assert.equal(refused.statusCode, 403, refused.body);
      assert.deepEqual(refused.json(), { message: 'at most 4 triggers per account' });
    }
    assert.equal(await count('triggers', 'account_id', account), 4);
  });

  it('refuses tools over QUOTA_TOOLS_PER_AGENT and connectors over QUOTA_CONNECTORS_PER_AGENT, per agent', async () => {
    const user = await registerUser(app);
    const agent = await newAgent(user);
    await fillThenRefuse(user, `/api/agents/${agent}/tools`, tool, 3, 'at most 3 tools per agent', () => count('tools', 'agent_id', agent));
    await fillThenRefuse(user, `/api/agents/${agent}/connectors`, connector, 2, 'at most 2 connectors per agent', () => count('connectors', 'agent_id', agent));
    // Another agent of the same account has its own budget.
    const second = await newAgent(user);
    assert.equal((await api(app, user).post(`/api/agents/${second}/tools`, tool(0))).statusCode, 201);
    assert.equal((await api(app, user).post(`/api/agents/${second}/connectors`, connector(0))).statusCode, 201);
    // An agent that is not yours is still a 404, not a quota answer.
    const stranger = await registerUser(app);
    assert.equal((await api(app, stranger).post(`/api/agents/${agent}/tools`, tool(0))).statusCode, 404);
  });

  it('is exact under concurrent creates: exactly the quota succeeds', async () => {
    const user = await registerUser(app);
    const account = await accountOf(user);
    const agent = await newAgent(user);
    const race = async (quota: number, requests: (i: number) => [string, unknown], counted: () => Promise<number>) => {
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => api(app, user).post(...requests(i))));
      const codes = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [...Array(quota).fill(201), ...Array(12 - quota).fill(403)], answers.map((r) => r.body).join('\n'));
      assert.equal(await counted(), quota);
    };
    await race(3, (i) => ['/api/webhooks', webhook(i)], () => count('webhooks', 'account_id', account));
    await race(4, (i) => [i % 2 ? '/api/user-triggers' : `/api/agents/${agent}/triggers`, trigger(i)], () => count('triggers', 'account_id', account));
    await race(3, (i) => [`/api/agents/${agent}/tools`, tool(i)], () => count('tools', 'agent_id', agent));
    await race(2, (i) => [`/api/agents/${agent}/connectors`, connector(i)], () => count('connectors', 'agent_id', agent));
  });

  it('documents the 403 on every create route', async () => {
    const paths = (await api(app).get('/api/openapi.json')).json().paths;
    for (const path of ['/api/webhooks', '/api/user-triggers', '/api/agents/{agentId}/triggers', '/api/agents/{agentId}/tools', '/api/agents/{agentId}/connectors']) {
      assert.ok(paths[path].post.responses['403'], `POST ${path} does not document 403`);
    }
  });
});
