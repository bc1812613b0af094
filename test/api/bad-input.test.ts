import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

/** Bad input of any kind gets a 4xx `{ message }` naming the problem: never a 500, never a hang. */
describe('bad input on every write and list route', () => {
  const suite = suiteContext();
  let app: TestApp;
  let user: TestUser;
  const routes: { method: 'POST' | 'PUT' | 'PATCH'; url: string }[] = [];
  /** The id to put in each path parameter of a list route, by the collection it follows. */
  const pathIds: Record<string, string> = {};

  const create = async (url: string, body: unknown) => {
    const res = await api(app, user).post(url, JSON.stringify(body));
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };

  before(async () => {
    ({ app } = await startTestApp(suite));
    user = await registerUser(app);
    const agent = await create('/api/agents', { name: 'A', status: 'template' });
    const ids = {
      connector: await create(`/api/agents/${agent}/connectors`, { type: 'telegram', name: 't', configJson: { botToken: 'telegram-token-1' } }),
      tool: await create(`/api/agents/${agent}/tools`, { type: 'custom', name: 'c', configJson: { endpoint: 'https://93.184.215.14/x' } }),
      webhook: await create('/api/webhooks', { name: 'w', url: 'https://93.184.215.14/hook' }),
      trigger: await create(`/api/agents/${agent}/triggers`, { type: 'webhook', name: 'h', configJson: {} }),
      userTrigger: await create('/api/user-triggers', { type: 'cron', name: 'c', configJson: { cronExpression: '0 * * * *' } }),
      member: await create('/api/team', { email: 'm@example.com', role: 'viewer' }),
    };
    const runner = await create('/api/agents', { name: 'R' });
    const run = await api(app, user).post(`/api/agents/${runner}/runs`, JSON.stringify({ input: 'x' }));
    assert.equal(run.statusCode, 202, run.body);
    Object.assign(pathIds, { agents: agent, triggers: ids.trigger, 'user-triggers': ids.userTrigger, webhooks: ids.webhook, runs: run.json().id, threads: 'chat-1',
      deliveries: '5d2c1b0a-9e8f-4a7b-8c6d-5e4f3a2b1c0d' }); // no such delivery: its attempts' cursor is read before the delivery is looked up
    for (const url of [`/api/agents/${agent}/connectors`, `/api/agents/${agent}/tools`, `/api/agents/${agent}/triggers`, '/api/webhooks', '/api/user-triggers', '/api/team', '/api/agents']) {
      routes.push({ method: 'POST', url });
    }
    for (const url of [`/api/connectors/${ids.connector}`, `/api/tools/${ids.tool}`, `/api/webhooks/${ids.webhook}`, `/api/triggers/${ids.trigger}`,
      `/api/user-triggers/${ids.userTrigger}`, `/api/team/${ids.member}`, `/api/agents/${agent}`]) {
      routes.push({ method: 'PUT', url }, { method: 'PATCH', url });
    }
  });

  const deep = (n: number): unknown => (n === 0 ? 'x' : { a: deep(n - 1) });
  const bodies = [
    'null', '[]', '"text"', '42', 'true', '{', '{"name": }',
    JSON.stringify({ type: null }), JSON.stringify({ type: 'nope', name: 'x' }), JSON.stringify({ name: 123 }), JSON.stringify({ name: '' }),
    JSON.stringify({ name: 'x'.repeat(10_000) }), JSON.stringify({ configJson: [] }), JSON.stringify({ configJson: 'x' }), JSON.stringify({ configJson: null }),
    JSON.stringify({ type: 'custom', name: 'x', configJson: { endpoint: 'javascript:alert(1)', headers: { 'bad name': 'x' } } }),
    JSON.stringify({ type: 'custom', name: 'x', configJson: { endpoint: 'http://[::1', method: 'TRACE' } }),
    JSON.stringify({ type: 'cron', name: 'x', configJson: { cronExpression: '* * * * * * * *', timezone: 42 } }),
    JSON.stringify({ type: 'cron', name: 'x', configJson: { cronExpression: '@every 0s', catchupWindow: '1s' } }),
    JSON.stringify({ type: 'event', name: 'x', configJson: { eventType: 'agent.completed', eventFilter: { 'a.b': { $regex: '(' } } } }),
    JSON.stringify({ type: 'event', name: 'x', configJson: { eventFilter: { $where: 1, x: { $contains: 1 } } } }),
    JSON.stringify({ type: 'webhook', name: 'x', configJson: { webhookPath: '../../etc', secretToken: '••••abcd' } }),
    JSON.stringify({ type: 'discord', name: 'x', configJson: deep(200) }),
    JSON.stringify({ url: 'ftp://x', events: ['*', 5], direction: 'sideways', secret: 'whsec_%%%' }),
    JSON.stringify({ email: 'not-an-email', role: 'owner', permissions: { canFly: true } }),
    JSON.stringify({ agentId: 'not-a-uuid' }), JSON.stringify({ agentId: '00000000-0000-4000-8000-000000000000' }),
    '{"name":"a\\u0000b","type":"telegram","configJson":{"botToken":"telegram-token-1"}}',
    '{"name":"x","email":"m@example.com","role":"viewer","configJson":{"guildId":"\\ud800"}}',
    '{"name":"x","configJson":{"\\udc00":"x"}}',
    `{"name":"x","configJson":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
    `{"name":"x","graph":${'['.repeat(3000)}${']'.repeat(3000)}}`,
    JSON.stringify({ enabled: 'yes' }), JSON.stringify({ __proto__: { admin: true }, constructor: { prototype: {} } }),
  ];

  it('answers each with a 4xx whose body is exactly { message }', async () => {
    let checked = 0;
    for (const { method, url } of routes) {
      for (const body of bodies) {
        const res = await api(app, user).request(method, url, body);
        const where = `${method} ${url} ${body.slice(0, 80)} → ${res.statusCode} ${res.body.slice(0, 200)}`;
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, where);
        assert.deepEqual(Object.keys(res.json()), ['message'], where);
        assert.ok(res.json().message.length > 0, where);
        checked++;
      }
    }
    assert.equal(checked, routes.length * bodies.length);
  });

  it('refuses a "__proto__" key (valid JSON) with a 400 that says so, at any depth, on every write route and the hooks', async () => {
    const cases = [
      ['{"name":"x","__proto__":{"admin":true}}', 'body: "__proto__" is not allowed as a key'],
      ['{"name":"x","configJson":{"eventFilter":{"__proto__":1}}}', 'body.configJson.eventFilter: "__proto__" is not allowed as a key'],
      ['{"configJson":{"constructor":{"prototype":{"admin":true}}}}', 'body.configJson.constructor: "prototype" is not allowed as a key inside "constructor"'],
    ] as const;
    const hooks = ['/api/hooks/webhooks/0b5e8f2a-1c3d-4e5f-8a9b-0c1d2e3f4a5b', '/api/hooks/triggers/some-path'].map((url) => ({ method: 'POST' as const, url }));
    for (const { method, url } of [...routes, ...hooks]) {
      for (const [body, message] of cases) {
        const res = await api(app, user).request(method, url, body);
        assert.equal(res.statusCode, 400, `${method} ${url} ${body}: ${res.body}`);
        assert.deepEqual(res.json(), { message }, `${method} ${url} ${body}`);
      }
    }
  });

  it('answers 400, never 500, for a crafted cursor on every list route', async () => {
    const paths: Record<string, { get?: { parameters?: { in: string; name: string }[] } }> =
      (await api(app).get('/api/openapi.json')).json().paths;
    const lists = Object.entries(paths)
      .filter(([, ops]) => ops.get?.parameters?.some((p) => p.in === 'query' && p.name === 'cursor'))
      .map(([path]) =>
        path.replace(/\/([\w-]+)\/\{(\w+)\}/g, (_, collection: string) => {
          assert.ok(pathIds[collection], `no id to list ${path} with`);
          return `/${collection}/${pathIds[collection]}`;
        }),
      );
    assert.ok(lists.length >= 14, `only ${lists.length} list routes`);
    const id = '0b5e8f2a-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
    const cursor = (createdAt: unknown) => Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
    // Each passes Date.parse, or has Postgres' form with a value it refuses.
    const crafted = ['1', '-1', '2026', '2026-01-01', '2026-01-01T00:00:00Z', 'Thu, 01 Jan 2026 00:00:00 GMT', '2026-02-30 10:00:00+00',
      '2026-01-01 24:00:00+00', '2026-01-01 00:00:60+00', '2026-01-01 00:00:00+16', '2026-01-01 00:00:00.1234567+00', '2026-01-01 00:00:00'];
    for (const url of lists) {
      for (const createdAt of crafted) {
        const res = await api(app, user).get(`${url}?cursor=${cursor(createdAt)}`);
        assert.equal(res.statusCode, 400, `${url} ${createdAt}: ${res.statusCode} ${res.body}`);
        assert.deepEqual(res.json(), { message: 'querystring.cursor: is not a valid cursor' }, `${url} ${createdAt}`);
      }
      // Expected fires and the timeline built on them page by time: their cursor holds the last time listed
      // (409 for a trigger without a schedule).
      if (url.endsWith('/expected-fires') || url.endsWith('/timeline')) {
        const res = await api(app, user).get(`${url}?cursor=${Buffer.from(JSON.stringify([Date.now() - 60_000])).toString('base64url')}`);
        assert.ok([200, 409].includes(res.statusCode), `${url}: ${res.statusCode} ${res.body}`);
        continue;
      }
      // A run's steps page by position: their cursor holds the last index seen.
      if (url.endsWith('/steps')) {
        const res = await api(app, user).get(`${url}?cursor=${Buffer.from('[0]').toString('base64url')}`);
        assert.equal(res.statusCode, 200, `${url}: ${res.statusCode} ${res.body}`);
        continue;
      }
      // A delivery's attempts page by (generation, attempt): their cursor holds the last pair seen, read
      // before the delivery (none here: 404).
      if (url.endsWith('/attempts')) {
        const res = await api(app, user).get(`${url}?cursor=${Buffer.from('[1,0]').toString('base64url')}`);
        assert.equal(res.statusCode, 404, `${url}: ${res.statusCode} ${res.body}`);
        assert.deepEqual(res.json(), { message: 'Delivery not found' });
        continue;
      }
      // What Postgres prints, in any session time zone, is a cursor.
      for (const createdAt of ['2026-01-01 00:00:00+00', '2026-11-21 11:00:00.123456+00', '2026-01-01 05:30:00.5+05:30', '2025-12-31 21:00:00-03']) {
        const res = await api(app, user).get(`${url}?cursor=${cursor(createdAt)}`);
        assert.equal(res.statusCode, 200, `${url} ${createdAt}: ${res.statusCode} ${res.body}`);
      }
    }
  });
});
