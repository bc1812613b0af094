import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

/**
 * Issue 3 §8: for every item endpoint and sub-collection, a second account gets 404 for the first
 * account's ids, never sees them in a list, and cannot change them.
 */
describe('account isolation across every resource', () => {
  const suite = suiteContext();
  let app: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  const ids: Record<string, string> = {};

  const created = async (user: TestUser, url: string, payload: unknown) => {
    const res = await api(app, user).post(url, payload);
    assert.equal(res.statusCode, 201, `POST ${url}: ${res.body}`);
    return res.json().id as string;
  };

  before(async () => {
    ({ app } = await startTestApp(suite));
    owner = await registerUser(app);
    stranger = await registerUser(app);
    ids.agent = await created(owner, '/api/agents', { name: 'Private agent' });
    ids.connector = await created(owner, `/api/agents/${ids.agent}/connectors`, {
      type: 'discord', name: 'Discord', configJson: { botToken: 'discord-bot-token-1', guildId: 'g-1' },
    });
    ids.tool = await created(owner, `/api/agents/${ids.agent}/tools`, { type: 'coin_prices', name: 'Prices', configJson: { coinIds: ['bitcoin'] } });
    ids.webhook = await created(owner, '/api/webhooks', { name: 'Out', url: 'https://93.184.215.14/hook', events: ['agent.created'] });
    ids.trigger = await created(owner, `/api/agents/${ids.agent}/triggers`, { type: 'cron', name: 'Daily', configJson: { cronExpression: '0 9 * * *' } });
    ids.userTrigger = await created(owner, '/api/user-triggers', { type: 'webhook', name: 'Hook', agentId: ids.agent, configJson: {} });
    ids.member = await created(owner, '/api/team', { email: 'colleague@example.com', role: 'viewer' });
    ids.apiKey = await created(owner, '/api/auth/api-keys', { name: 'ci' });
  });

  const items = () => [
    { url: `/api/agents/${ids.agent}`, update: { name: 'stolen' } },
    { url: `/api/connectors/${ids.connector}`, update: { name: 'stolen' } },
    { url: `/api/tools/${ids.tool}`, update: { name: 'stolen' } },
    { url: `/api/webhooks/${ids.webhook}`, update: { name: 'stolen' } },
    { url: `/api/triggers/${ids.trigger}`, update: { name: 'stolen' } },
    { url: `/api/user-triggers/${ids.userTrigger}`, update: { name: 'stolen' } },
    { url: `/api/team/${ids.member}`, update: { role: 'admin' } },
  ];

  it('answers 404 to GET, PUT, PATCH and DELETE of every item', async () => {
    for (const { url, update } of items()) {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
        const res = await api(app, stranger).request(method, url, method === 'PUT' || method === 'PATCH' ? update : undefined);
        assert.equal(res.statusCode, 404, `${method} ${url} → ${res.statusCode} ${res.body}`);
        assert.deepEqual(Object.keys(res.json()), ['message']);
      }
    }
    const graph = await api(app, stranger).put(`/api/agents/${ids.agent}/graph`, { nodes: [], edges: [] });
    assert.equal(graph.statusCode, 404);
    assert.equal((await api(app, stranger).get(`/api/agents/${ids.agent}/graph`)).statusCode, 404);
    assert.equal((await api(app, stranger).delete(`/api/auth/api-keys/${ids.apiKey}`)).statusCode, 404);
  });

  it('answers 404 to the sub-collections of another account\'s agent, for reads and writes', async () => {
    const bodies: Record<string, unknown> = {
      connectors: { type: 'telegram', name: 'x', configJson: { botToken: 'telegram-token-9' } },
      tools: { type: 'coin_prices', name: 'x', configJson: { coinIds: ['eth'] } },
      triggers: { type: 'cron', name: 'x', configJson: { cronExpression: '* * * * *' } },
    };
    for (const [sub, body] of Object.entries(bodies)) {
      const url = `/api/agents/${ids.agent}/${sub}`;
      assert.equal((await api(app, stranger).get(url)).statusCode, 404, `GET ${url}`);
      assert.equal((await api(app, stranger).post(url, body)).statusCode, 404, `POST ${url}`);
    }
  });

  it('refuses to link a user trigger to another account\'s agent', async () => {
    const res = await api(app, stranger).post('/api/user-triggers', { type: 'webhook', name: 'x', agentId: ids.agent, configJson: {} });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().message, /agentId/);
  });

  it('never shows the first account\'s ids in any of the second account\'s lists', async () => {
    await created(stranger, '/api/agents', { name: 'Own agent' });
    const secret = new Set(Object.values(ids));
    for (const url of ['/api/agents', '/api/webhooks', '/api/user-triggers', '/api/team', '/api/invitations', '/api/auth/api-keys', '/api/account/transactions']) {
      const res = await api(app, stranger).get(url);
      assert.equal(res.statusCode, 200, `GET ${url}: ${res.body}`);
      const leaked = JSON.stringify(res.json()).match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g)?.filter((id) => secret.has(id));
      assert.deepEqual(leaked ?? [], [], `${url} leaks ${leaked}`);
    }
  });

  it('left every resource of the first account as it was', async () => {
    for (const { url } of items()) {
      const res = await api(app, owner).get(url);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      if (!url.startsWith('/api/team')) assert.notEqual(res.json().name, 'stolen');
      else assert.equal(res.json().role, 'viewer');
    }
    for (const sub of ['connectors', 'tools', 'triggers']) {
      assert.equal((await api(app, owner).get(`/api/agents/${ids.agent}/${sub}`)).json().length, 1, sub);
    }
    assert.equal((await api(app, owner).get('/api/auth/api-keys')).json().length, 1);
  });
});
