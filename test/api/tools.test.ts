import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { api } from '../helpers/api';
import { readAllPages, registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { testSecretBox } from '../helpers/config';
import { joinWorkspace } from '../helpers/workspaces';

const dexPairs = { type: 'dex_pairs', name: 'DEX pairs', configJson: { chainIds: ['ethereum', 'base'] } };
const markets = { type: 'prediction_markets', name: 'Markets', configJson: { marketIds: ['m-1', 'm-2'] } };
const coins = { type: 'coin_prices', name: 'Prices', configJson: { coinIds: ['bitcoin'] } };
const secretHeaders = {
  Authorization: 'Bearer tool-bearer-0001-abcd',
  'X-Api-Key': 'tool-api-key-0002-efgh',
  'x-auth-token': 'tool-token-0003-ijkl',
  'Client-SECRET': 'tool-secret-0004-mnop',
};
const custom = {
  type: 'custom', name: 'Weather', description: 'Looks up the weather',
  configJson: {
    endpoint: 'https://93.184.215.14/weather?city={{city}}', method: 'POST',
    headers: { ...secretHeaders, Accept: 'application/json' },
    bodyTemplate: '{"city": "{{city}}"}', responseMapping: { temperature: '$.main.temp' },
  },
};
const maskedHeaders = { Authorization: '••••abcd', 'X-Api-Key': '••••efgh', 'x-auth-token': '••••ijkl', 'Client-SECRET': '••••mnop', Accept: 'application/json' };

describe('tools (docs/api.md § Connectors and tools)', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;

  before(async () => {
    ({ app, db } = await startTestApp(suite));
  });

  const newAgent = async (user: TestUser, on: TestApp = app) =>
    (await api(on, user).post('/api/agents', { name: 'Host', status: 'template' })).json().id as string;
  const storedConfig = async (id: string) =>
    (await db.query<{ config_json: { headers?: Record<string, string> } & Record<string, unknown> }>('SELECT config_json FROM tools WHERE id = $1', [id]))
      .rows[0]!.config_json;

  it('creates each type and fills the defaults into the stored config', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const expected: [unknown, Record<string, unknown>][] = [
      [dexPairs, { chainIds: ['ethereum', 'base'], pairAddresses: [] }],
      [{ ...dexPairs, configJson: { chainIds: ['1'], pairAddresses: ['0xabc'] } }, { chainIds: ['1'], pairAddresses: ['0xabc'] }],
      [markets, { marketIds: ['m-1', 'm-2'] }],
      [coins, { coinIds: ['bitcoin'] }],
      [{ type: 'custom', name: 'Minimal', configJson: { endpoint: 'http://93.184.215.14/x' } }, { endpoint: 'http://93.184.215.14/x', method: 'GET', headers: {} }],
      [custom, custom.configJson],
    ];
    for (const [input, config] of expected) {
      const res = await api(app, user).post(`/api/agents/${agentId}/tools`, input);
      assert.equal(res.statusCode, 201, res.body);
      const tool = res.json();
      const { type, name, description } = input as { type: string; name: string; description?: string };
      assert.deepEqual(
        { type: tool.type, name: tool.name, description: tool.description, enabled: tool.enabled, agentId: tool.agentId, configJson: tool.configJson },
        { type, name, description: description ?? '', enabled: true, agentId, configJson: config },
      );
      assert.match(tool.id, /^[0-9a-f-]{36}$/);
      assert.ok(tool.createdAt.endsWith('Z') && tool.updatedAt.endsWith('Z'));
      const read = (await api(app, user).get(`/api/tools/${tool.id}`)).json();
      if (type !== 'custom') assert.deepEqual(read, tool, 'nothing secret, so a read shows the same');
      const stored = await storedConfig(tool.id);
      assert.deepEqual(Object.keys(stored).sort(), Object.keys(config).sort(), 'defaults are stored');
    }
    const list = (await api(app, user).get(`/api/agents/${agentId}/tools`)).json();
    assert.deepEqual(list.map((t: { name: string }) => t.name), ['Weather', 'Minimal', 'Prices', 'Markets', 'DEX pairs', 'DEX pairs']);
  });

  it('masks secret headers on every read, shows the others as written', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const created = (await api(app, user).post(`/api/agents/${agentId}/tools`, custom)).json();
    assert.deepEqual(created.configJson.headers, custom.configJson.headers, 'full in the creating response');
    const read = (await api(app, user).get(`/api/tools/${created.id}`)).json();
    assert.deepEqual(read.configJson, { ...custom.configJson, headers: maskedHeaders });
    const list = await api(app, user).get(`/api/agents/${agentId}/tools`);
    assert.deepEqual(list.json()[0].configJson.headers, maskedHeaders);
    for (const value of Object.values(secretHeaders)) assert.ok(!list.body.includes(value));
  });

  it('validates each type\'s config, naming the field', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const customWith = (config: Record<string, unknown>) => ({ type: 'custom', name: 'c', configJson: { endpoint: 'https://93.184.215.14/', ...config } });
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, 'v']));
    const cases: [unknown, RegExp][] = [
      [{ ...coins, type: 'stock_prices' }, /^body\.type: must be one of dex_pairs, prediction_markets, coin_prices, custom, mcp$/],
      [{ name: 'x', configJson: {} }, /^body\.type: is required$/],
      [{ ...dexPairs, configJson: {} }, /^body\.configJson\.chainIds: is required$/],
      [{ ...dexPairs, configJson: { chainIds: [] } }, /^body\.configJson\.chainIds: /],
      [{ ...dexPairs, configJson: { chainIds: Array.from({ length: 101 }, (_, i) => `c${i}`) } }, /^body\.configJson\.chainIds: /],
      [{ ...dexPairs, configJson: { chainIds: ['x'.repeat(101)] } }, /^body\.configJson\.chainIds\.0: /],
      [{ ...dexPairs, configJson: { chainIds: [''] } }, /^body\.configJson\.chainIds\.0: /],
      [{ ...dexPairs, configJson: { chainIds: 'ethereum' } }, /^body\.configJson\.chainIds: /],
      [{ ...dexPairs, configJson: { chainIds: ['1'], pairAddresses: Array.from({ length: 501 }, (_, i) => `p${i}`) } }, /^body\.configJson\.pairAddresses: /],
      [{ ...dexPairs, configJson: { chainIds: ['1'], coinIds: ['x'] } }, /^body\.configJson: .*coinIds/],
      [{ ...markets, configJson: { marketIds: [] } }, /^body\.configJson\.marketIds: /],
      [{ ...markets, configJson: { marketIds: Array.from({ length: 501 }, (_, i) => `m${i}`) } }, /^body\.configJson\.marketIds: /],
      [{ ...markets, configJson: {} }, /^body\.configJson\.marketIds: is required$/],
      [{ ...coins, configJson: {} }, /^body\.configJson\.coinIds: is required$/],
      [{ ...coins, configJson: { coinIds: [1] } }, /^body\.configJson\.coinIds\.0: /],
      [{ type: 'custom', name: 'c', configJson: {} }, /^body\.configJson\.endpoint: is required$/],
      [customWith({ endpoint: '/relative' }), /^body\.configJson\.endpoint: must be an absolute http or https URL$/],
      [customWith({ endpoint: 'ftp://93.184.215.14/x' }), /^body\.configJson\.endpoint: must be an absolute http or https URL$/],
      [customWith({ endpoint: `https://93.184.215.14/${'x'.repeat(2000)}` }), /^body\.configJson\.endpoint: /],
      [customWith({ method: 'HEAD' }), /^body\.configJson\.method: /],
      [customWith({ headers: { 'Bad Name': 'v' } }), /^body\.configJson\.headers\.Bad Name: is not a valid HTTP header name$/],
      [customWith({ headers: { 'X-Ok': 1 } }), /^body\.configJson\.headers\.X-Ok: /],
      [customWith({ headers: { 'X-Ok': 'a\r\nInjected: 1' } }), /^body\.configJson\.headers\.X-Ok: must not contain line breaks$/],
      [customWith({ headers: many(51) }), /^body\.configJson\.headers: must have at most 50 entries$/],
      [customWith({ headers: { accept: 'a', Accept: 'b' } }), /^body\.configJson\.headers: names the same header twice/],
      [customWith({ headers: ['Accept'] }), /^body\.configJson\.headers: /],
      [customWith({ bodyTemplate: 'x'.repeat(65_537) }), /^body\.configJson\.bodyTemplate: /],
      [customWith({ bodyTemplate: {} }), /^body\.configJson\.bodyTemplate: /],
      [customWith({ responseMapping: many(101) }), /^body\.configJson\.responseMapping: must have at most 100 entries$/],
      [customWith({ responseMapping: { out: 5 } }), /^body\.configJson\.responseMapping\.out: /],
      [customWith({ timeout: 5 }), /^body\.configJson: .*timeout/],
      [customWith({ headers: { Authorization: '••••abcd' } }), /^body\.configJson\.headers\.Authorization: a masked value/],
      [{ ...coins, description: 'd'.repeat(2001) }, /^body\.description: /],
      [{ ...coins, name: '' }, /^body\.name: /],
      [{ ...coins, enabled: 1 }, /^body\.enabled: /],
      [{ ...coins, agentId: randomUUID() }, /^body: .*agentId/],
      [{ ...coins, configJson: undefined }, /^body\.configJson: is required$/],
    ];
    for (const [payload, message] of cases) {
      const res = await api(app, user).post(`/api/agents/${agentId}/tools`, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 120));
      assert.deepEqual(Object.keys(res.json()), ['message']);
      assert.match(res.json().message, message, JSON.stringify(payload).slice(0, 120));
    }
    // Limits are inclusive.
    const atLimits = customWith({ headers: many(50), responseMapping: many(100), bodyTemplate: 'x'.repeat(65_536) });
    assert.equal((await api(app, user).post(`/api/agents/${agentId}/tools`, atLimits)).statusCode, 201);
    assert.equal((await api(app, user).get(`/api/agents/${agentId}/tools`)).json().length, 1, 'nothing written by the refusals');
  });

  it('updates partially with PUT and PATCH, merging configJson', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const tool = (await api(app, user).post(`/api/agents/${agentId}/tools`, { ...dexPairs, configJson: { chainIds: ['1'], pairAddresses: ['0xa'] } })).json();
    const url = `/api/tools/${tool.id}`;

    const put = await api(app, user).put(url, { description: 'now described' });
    assert.equal(put.statusCode, 200);
    assert.equal(put.json().description, 'now described');
    assert.equal(put.json().name, 'DEX pairs');
    assert.deepEqual(put.json().configJson, { chainIds: ['1'], pairAddresses: ['0xa'] });

    const patch = await api(app, user).patch(url, { enabled: false, configJson: { chainIds: ['1', '8453'] } });
    assert.equal(patch.statusCode, 200);
    assert.equal(patch.json().enabled, false);
    assert.equal(patch.json().description, 'now described');
    assert.deepEqual(patch.json().configJson, { chainIds: ['1', '8453'], pairAddresses: ['0xa'] }, 'arrays replace, other keys stay');

    const removed = await api(app, user).patch(url, { configJson: { pairAddresses: null } });
    assert.deepEqual(removed.json().configJson, { chainIds: ['1', '8453'], pairAddresses: [] }, 'null removes, the default comes back');
    assert.deepEqual((await api(app, user).get(url)).json().configJson, { chainIds: ['1', '8453'], pairAddresses: [] });

    for (const [payload, message] of [
      [{ configJson: { chainIds: null } }, /^body\.configJson\.chainIds: is required$/],
      [{ configJson: { chainIds: [] } }, /^body\.configJson\.chainIds: /],
      [{ configJson: { marketIds: ['m'] } }, /^body\.configJson: .*marketIds/],
      [{ type: 'coin_prices' }, /^body\.configJson: is required when type changes/],
      [{ type: 'coin_prices', configJson: { chainIds: ['1'] } }, /^body\.configJson\.coinIds: is required$/],
      [{ type: 'coin_prices', configJson: { coinIds: ['x'], chainIds: ['1'] } }, /^body\.configJson: .*chainIds/],
      [{ type: 'custom', configJson: { endpoint: 'nope' } }, /^body\.configJson\.endpoint: /],
      [{ description: 'd'.repeat(2001) }, /^body\.description: /],
      [{ type: 'oracle', configJson: {} }, /^body\.type: /],
      // A null for a field the type does not have: the merge alone would drop it unremarked (schemathesis).
      [{ configJson: { coinIds: null } }, /^body\.configJson: Unrecognized key: "coinIds"$/],
      [{ configJson: { marketIds: null, endpoint: null } }, /^body\.configJson: Unrecognized keys: "marketIds", "endpoint"$/],
      [{ type: 'coin_prices', configJson: { coinIds: ['x'], chainIds: null } }, /^body\.configJson: Unrecognized key: "chainIds"$/],
    ] as const) {
      const res = await api(app, user).patch(url, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.match(res.json().message, message);
    }
    const switched = await api(app, user).put(url, { type: 'coin_prices', configJson: { coinIds: ['eth'] } });
    assert.equal(switched.statusCode, 200);
    assert.deepEqual({ type: switched.json().type, configJson: switched.json().configJson }, { type: 'coin_prices', configJson: { coinIds: ['eth'] } });
    // A new type's config is a merge patch onto nothing: a null is an absent field, and one with a default gets it.
    const toCustom = await api(app, user).patch(url, { type: 'custom', configJson: { endpoint: 'https://93.184.215.14/p', method: null, responseMapping: null } });
    assert.equal(toCustom.statusCode, 200, toCustom.body);
    assert.deepEqual(toCustom.json().configJson, { endpoint: 'https://93.184.215.14/p', method: 'GET', headers: {} });
  });

  it('shows a changed header secret once, keeps masked ones, refuses a wrong mask', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const tool = (await api(app, user).post(`/api/agents/${agentId}/tools`, custom)).json();
    const url = `/api/tools/${tool.id}`;

    // Touching only a plain header: the secrets stay masked in the response.
    const plain = await api(app, user).patch(url, { configJson: { headers: { Accept: 'text/plain' } } });
    assert.equal(plain.statusCode, 200);
    assert.deepEqual(plain.json().configJson.headers, { ...maskedHeaders, Accept: 'text/plain' });

    const changed = await api(app, user).patch(url, { configJson: { headers: { Authorization: 'Bearer rotated-9999-wxyz' } } });
    assert.deepEqual(changed.json().configJson.headers, { ...maskedHeaders, Accept: 'text/plain', Authorization: 'Bearer rotated-9999-wxyz' });
    assert.equal((await api(app, user).get(url)).json().configJson.headers.Authorization, '••••wxyz');

    // The config as read (masked) sent back whole: nothing changes.
    const read = (await api(app, user).get(url)).json();
    const echoed = await api(app, user).put(url, { configJson: read.configJson });
    assert.equal(echoed.statusCode, 200);
    assert.deepEqual(echoed.json().configJson, read.configJson);
    const stored = (await storedConfig(tool.id)).headers!;
    assert.equal(testSecretBox.open(stored.Authorization!), 'Bearer rotated-9999-wxyz');
    assert.equal(testSecretBox.open(stored['X-Api-Key']!), secretHeaders['X-Api-Key']);
    assert.equal(stored.Accept, 'text/plain');

    const wrong = await api(app, user).patch(url, { configJson: { headers: { 'X-Api-Key': '••••0000' } } });
    assert.equal(wrong.statusCode, 400);
    assert.match(wrong.json().message, /^body\.configJson\.headers\.X-Api-Key: a masked value/);

    // A new secret header is shown once; a removed one is gone.
    const added = await api(app, user).patch(url, { configJson: { headers: { 'X-Session-Token': 'session-token-7777', 'Client-SECRET': null } } });
    assert.equal(added.statusCode, 200);
    assert.equal(added.json().configJson.headers['X-Session-Token'], 'session-token-7777');
    assert.equal(added.json().configJson.headers.Authorization, '••••wxyz');
    assert.ok(!('Client-SECRET' in added.json().configJson.headers));
    assert.equal((await api(app, user).get(url)).json().configJson.headers['X-Session-Token'], '••••7777');
  });

  it('requires the secret headers again when any part of the endpoint changes: a secret never follows a new target', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const headers = { Authorization: 'Bearer origin-bound-0001', 'X-Api-Key': 'origin-key-0002', Accept: 'application/json' };
    const tool = (await api(app, user).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'api', configJson: { endpoint: 'https://93.184.215.14/v1/x', headers } })).json();
    const url = `/api/tools/${tool.id}`;
    const opened = async () => {
      const stored = await storedConfig(tool.id);
      return { endpoint: stored.endpoint, headers: Object.fromEntries(Object.entries(stored.headers!).map(([k, v]) => [k, k === 'Accept' ? v : testSecretBox.open(v)])) };
    };
    const message = (header: string) =>
      `body.configJson.headers.${header}: the endpoint changed, and a stored secret never follows a new target: send it again in full (or null to remove it)`;

    // Another scheme, host, port, path, query or fragment, with the secrets left out or sent masked: 400 naming the first, nothing changed.
    const elsewhere = [
      'https://198.51.100.7/v1/x', 'https://93.184.215.14:8443/v1/x', 'http://93.184.215.14/v1/x',
      'https://93.184.215.14/v2/y', 'https://93.184.215.14/v1/x?q=1', 'https://93.184.215.14/v1/x/', 'https://93.184.215.14/V1/x',
    ];
    for (const endpoint of elsewhere) {
      // Each case names one of the headers it did not send in full (whichever comes first).
      const cases: [Record<string, unknown>, string[]][] = [
        [{}, ['Authorization', 'X-Api-Key']],
        [{ headers: { Authorization: '••••0001', 'X-Api-Key': '••••0002' } }, ['Authorization', 'X-Api-Key']],
        [{ headers: { Authorization: 'Bearer new-0003' } }, ['X-Api-Key']],
        [{ headers: { Authorization: 'Bearer new-0003', 'X-Api-Key': '••••0002' } }, ['X-Api-Key']],
      ];
      for (const [sent, named] of cases) {
        for (const method of ['PATCH', 'PUT'] as const) {
          const res = await api(app, user).request(method, url, { configJson: { endpoint, ...sent } });
          assert.equal(res.statusCode, 400, `${method} ${endpoint} ${JSON.stringify(sent)}: ${res.body}`);
          assert.ok(named.map(message).includes(res.json().message), res.body);
        }
      }
    }
    assert.deepEqual(await opened(), { endpoint: 'https://93.184.215.14/v1/x', headers });

    // The same target, written as it was or with the default port spelled out: the secrets stay, masked.
    for (const endpoint of ['https://93.184.215.14/v1/x', 'https://93.184.215.14:443/v1/x']) {
      const res = await api(app, user).patch(url, { configJson: { endpoint } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().configJson.headers, { Authorization: '••••0001', 'X-Api-Key': '••••0002', Accept: 'application/json' });
    }
    assert.deepEqual((await opened()).headers, headers);

    // Each secret sent again in full, or removed: the move is made; what was sent is shown this once.
    const moved = await api(app, user).patch(url, {
      configJson: { endpoint: 'https://198.51.100.7/api', headers: { Authorization: 'Bearer for-the-new-host-0004', 'X-Api-Key': null } },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual(moved.json().configJson.headers, { Authorization: 'Bearer for-the-new-host-0004', Accept: 'application/json' });
    assert.deepEqual(await opened(), { endpoint: 'https://198.51.100.7/api', headers: { Authorization: 'Bearer for-the-new-host-0004', Accept: 'application/json' } });
    // Sending the same value again counts as sending it.
    const back = await api(app, user).patch(url, { configJson: { endpoint: 'https://93.184.215.14/', headers: { Authorization: 'Bearer for-the-new-host-0004' } } });
    assert.equal(back.statusCode, 200, back.body);
  });

  it('deletes with 204, then 404 on every item route', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const tool = (await api(app, user).post(`/api/agents/${agentId}/tools`, coins)).json();
    const url = `/api/tools/${tool.id}`;
    const del = await api(app, user).delete(url);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await api(app, user).request(method, url, method === 'PUT' || method === 'PATCH' ? { name: 'x' } : undefined);
      assert.equal(res.statusCode, 404, method);
      assert.deepEqual(res.json(), { message: 'Tool not found' });
    }
  });

  it('pages newest first with a Link header until the end', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    await api(app, user).post(`/api/agents/${await newAgent(user)}/tools`, coins);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await api(app, user).post(`/api/agents/${agentId}/tools`, { ...coins, name: `t${i}` })).json().id);
    const { ids, pages } = await readAllPages(app, user, `/api/agents/${agentId}/tools?limit=2`);
    assert.equal(pages, 3);
    assert.deepEqual(ids, [...created].reverse());
  });

  it('shows one account nothing of another\'s: 404 on every route, absent from lists', async () => {
    const owner = await registerUser(app);
    const stranger = await registerUser(app);
    const agentId = await newAgent(owner);
    const strangerAgent = await newAgent(stranger);
    const tool = (await api(app, owner).post(`/api/agents/${agentId}/tools`, custom)).json();
    for (const [method, body] of [['GET'], ['PUT', { name: 'x' }], ['PATCH', { enabled: false }], ['DELETE']] as const) {
      const res = await api(app, stranger).request(method, `/api/tools/${tool.id}`, body);
      assert.equal(res.statusCode, 404, method);
      assert.deepEqual(res.json(), { message: 'Tool not found' });
    }
    for (const agent of [agentId, randomUUID()]) {
      for (const [method, body] of [['GET'], ['POST', coins]] as const) {
        const res = await api(app, stranger).request(method, `/api/agents/${agent}/tools`, body);
        assert.equal(res.statusCode, 404, `${method} tools of ${agent}`);
        assert.deepEqual(res.json(), { message: 'Agent not found' });
      }
    }
    for (const url of ['/api/tools/123', '/api/agents/123/tools']) assert.equal((await api(app, owner).get(url)).statusCode, 404, url);
    assert.deepEqual((await api(app, stranger).get(`/api/agents/${strangerAgent}/tools`)).json(), []);
    const still = (await api(app, owner).get(`/api/tools/${tool.id}`)).json();
    assert.equal(still.name, 'Weather');
    assert.equal(still.enabled, true);
  });

  it('goes with its agent: after DELETE /api/agents/:id the tool answers 404', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const ids = [];
    for (const input of [coins, custom]) ids.push((await api(app, user).post(`/api/agents/${agentId}/tools`, input)).json().id as string);
    assert.equal((await api(app, user).get(`/api/tools/${ids[1]}`)).statusCode, 200);
    assert.equal((await api(app, user).delete(`/api/agents/${agentId}`)).statusCode, 204);
    for (const id of ids) assert.equal((await api(app, user).get(`/api/tools/${id}`)).statusCode, 404);
    assert.equal((await db.query('SELECT 1 FROM tools WHERE id = ANY($1)', [ids])).rows.length, 0);
  });

  it('stores secret headers sealed: no plaintext in the row, and the secret box opens them back', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const tool = (await api(app, user).post(`/api/agents/${agentId}/tools`, custom)).json();
    const { rows } = await db.query<{ text: string }>('SELECT config_json::text AS text FROM tools WHERE id = $1', [tool.id]);
    const raw = rows[0]!.text;
    for (const value of Object.values(secretHeaders)) {
      assert.ok(!raw.includes(value), `${value} stored in plaintext`);
      assert.ok(!raw.includes(value.slice(0, 10)), `${value} partly stored in plaintext`);
    }
    const stored = JSON.parse(raw) as typeof custom.configJson;
    assert.equal(stored.headers.Accept, 'application/json', 'plain headers stored as written');
    const opened = Object.fromEntries(Object.entries(stored.headers).map(([k, v]) => [k, k === 'Accept' ? v : testSecretBox.open(v)]));
    assert.deepEqual(opened, custom.configJson.headers);
    assert.deepEqual({ ...stored, headers: null }, { ...custom.configJson, headers: null });
  });

  it('treats every header but Content-Type, Accept, Accept-Language and User-Agent as a secret: sealed, masked, kept when sent back, hidden from viewers', async () => {
    const owner = await registerUser(app);
    const agentId = await newAgent(owner);
    const hidden = { Cookie: 'session=cookie-value-0001', 'X-Auth': 'x-auth-value-0002', 'X-Session': 'x-session-value-0003' };
    const plain = { 'content-type': 'application/json', Accept: 'application/json', 'Accept-Language': 'en', 'User-Agent': 'agent/1.0' };
    const created = await api(app, owner).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'c', configJson: { endpoint: 'https://93.184.215.14/x', headers: { ...hidden, ...plain } } });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json().configJson.headers, { ...hidden, ...plain }, 'shown in full to the request that set them');
    const masked = { Cookie: '••••0001', 'X-Auth': '••••0002', 'X-Session': '••••0003', ...plain };
    const url = `/api/tools/${created.json().id}`;

    const viewer = await joinWorkspace(app, owner, 'viewer');
    for (const headers of [owner.auth, viewer.headers]) {
      for (const target of [url, `/api/agents/${agentId}/tools`]) {
        const res = await app.inject({ method: 'GET', url: target, headers });
        assert.equal(res.statusCode, 200, res.body);
        for (const value of Object.values(hidden)) assert.ok(!res.body.includes(value), `${value} readable at ${target}`);
        const tool = Array.isArray(res.json()) ? res.json()[0] : res.json();
        assert.deepEqual(tool.configJson.headers, masked);
      }
    }
    const raw = JSON.stringify(await storedConfig(created.json().id));
    for (const value of Object.values(hidden)) assert.ok(!raw.includes(value), `${value} stored in plaintext`);
    const stored = (await storedConfig(created.json().id)).headers!;
    assert.deepEqual(Object.fromEntries(Object.keys(hidden).map((k) => [k, testSecretBox.open(stored[k]!)])), hidden);
    for (const [k, v] of Object.entries(plain)) assert.equal(stored[k], v, `${k} is stored as written`);

    // The masks sent back keep the stored values.
    const back = await api(app, owner).put(url, { configJson: { endpoint: 'https://93.184.215.14/x', headers: masked } });
    assert.equal(back.statusCode, 200, back.body);
    assert.deepEqual(back.json().configJson.headers, masked);
    const reopened = (await storedConfig(created.json().id)).headers!;
    assert.deepEqual(Object.fromEntries(Object.keys(hidden).map((k) => [k, testSecretBox.open(reopened[k]!)])), hidden);
  });

  it('reads a header stored in plain text before it counted as a secret, and seals it at the next write', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const tool = (await api(app, user).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'old', configJson: { endpoint: 'https://93.184.215.14/x' } })).json();
    // As an earlier version stored it: X-Session was not a secret then.
    await db.query(`UPDATE tools SET config_json = jsonb_set(config_json, '{headers}', '{"X-Session": "legacy-plain-value-7777", "Accept": "text/plain"}') WHERE id = $1`, [tool.id]);
    const read = await api(app, user).get(`/api/tools/${tool.id}`);
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(read.json().configJson.headers, { 'X-Session': '••••7777', Accept: 'text/plain' });
    const renamed = await api(app, user).patch(`/api/tools/${tool.id}`, { name: 'renamed' });
    assert.equal(renamed.statusCode, 200, renamed.body);
    const stored = (await storedConfig(tool.id)).headers!;
    assert.notEqual(stored['X-Session'], 'legacy-plain-value-7777', 'sealed at the next write');
    assert.equal(testSecretBox.open(stored['X-Session']!), 'legacy-plain-value-7777');
  });

  it('masks the credentials of an endpoint stored with them before they were refused, and exports it without them', async () => {
    const owner = await registerUser(app);
    const agentId = await newAgent(owner);
    const tool = (await api(app, owner).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'old', configJson: { endpoint: 'https://93.184.215.14/x' } })).json();
    await db.query(`UPDATE tools SET config_json = jsonb_set(config_json, '{endpoint}', '"https://user:legacy-pass-4321@93.184.215.14/x"') WHERE id = $1`, [tool.id]);
    const viewer = await joinWorkspace(app, owner, 'viewer', { canExport: true });
    for (const headers of [owner.auth, viewer.headers]) {
      const read = await app.inject({ method: 'GET', url: `/api/tools/${tool.id}`, headers });
      assert.equal(read.json().configJson.endpoint, 'https://••••4321@93.184.215.14/x');
      const exported = await app.inject({ method: 'GET', url: `/api/agents/${agentId}/export`, headers });
      assert.equal(exported.statusCode, 200, exported.body);
      assert.ok(!exported.body.includes('legacy-pass') && !exported.body.includes('user:'), exported.body);
      assert.equal(exported.json().tools[0].configJson.endpoint, 'https://93.184.215.14/x');
    }
    // An update must move them out of the URL (a header holds them as a secret).
    const renamed = await api(app, owner).patch(`/api/tools/${tool.id}`, { name: 'renamed' });
    assert.deepEqual([renamed.statusCode, renamed.json()], [400, { message: 'body.configJson.endpoint: must not contain credentials (user:password@); send them in a header' }]);
  });

  it('refuses an endpoint with credentials in it (user:password@), naming the field', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const message = { message: 'body.configJson.endpoint: must not contain credentials (user:password@); send them in a header' };
    for (const endpoint of ['https://user:pass@93.184.215.14/x', 'https://user@93.184.215.14/x', 'http://:pw@93.184.215.14/']) {
      const res = await api(app, user).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'c', configJson: { endpoint } });
      assert.equal(res.statusCode, 400, endpoint);
      assert.deepEqual(res.json(), message, endpoint);
    }
    const tool = (await api(app, user).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'c', configJson: { endpoint: 'https://93.184.215.14/x' } })).json();
    const res = await api(app, user).patch(`/api/tools/${tool.id}`, { configJson: { endpoint: 'https://user:pass@93.184.215.14/x' } });
    assert.deepEqual([res.statusCode, res.json()], [400, message]);
    assert.equal((await storedConfig(tool.id)).endpoint, 'https://93.184.215.14/x');
  });

  it('masks secret query values of the endpoint (key, token, secret, password, sig, auth, pass, pwd, jwt, session, code, signature) on read; viewers see the origin only; the URL sent back as read keeps them', async () => {
    const owner = await registerUser(app);
    const agentId = await newAgent(owner);
    const endpoint =
      'https://93.184.215.14/v1/q?api_key=query-key-0001&region=eu&X-Amz-Signature=query-sig-0002&AUTH=query-auth-0003&pwd=x&Password=query-pw-0004' +
      '&pass_word=query-pass-0010&jwt=query-jwt-0011&sessionId=query-sess-0012&code=query-code-0013&signature=query-sign-0014';
    const shown =
      'https://93.184.215.14/v1/q?api_key=••••0001&region=eu&X-Amz-Signature=••••0002&AUTH=••••0003&pwd=••••&Password=••••0004' +
      '&pass_word=••••0010&jwt=••••0011&sessionId=••••0012&code=••••0013&signature=••••0014';
    const created = await api(app, owner).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'q', configJson: { endpoint, headers: { Authorization: 'Bearer header-0005' } } });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().configJson.endpoint, endpoint, 'shown in full to the request that set it');
    const url = `/api/tools/${created.json().id}`;
    const viewer = await joinWorkspace(app, owner, 'viewer');
    // A member without canExport sees the origin only: a path can be a secret too (docs/api.md § Secrets).
    for (const [headers, expected] of [[owner.auth, shown], [viewer.headers, 'https://93.184.215.14/…']] as const) {
      const res = await app.inject({ method: 'GET', url, headers });
      assert.equal(res.json().configJson.endpoint, expected);
      const list = await app.inject({ method: 'GET', url: `/api/agents/${agentId}/tools`, headers });
      assert.equal(list.json()[0].configJson.endpoint, expected);
      for (const secret of ['query-key-0001', 'query-sig-0002', 'query-auth-0003', 'query-pw-0004', 'query-pass-0010', 'query-jwt-0011', 'query-sess-0012', 'query-code-0013', 'query-sign-0014']) {
        assert.ok(!res.body.includes(secret) && !list.body.includes(secret), secret);
      }
    }
    // An editor without canExport who edits something else keeps the endpoint as stored (the origin-only URL stands for it).
    const editor = await joinWorkspace(app, owner, 'editor', { canExport: false });
    const renamed = await app.inject({ method: 'GET', url, headers: editor.headers });
    const edited = await app.inject({ method: 'PUT', url, headers: editor.headers, payload: { name: 'q2', configJson: renamed.json().configJson } });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.equal(edited.json().configJson.endpoint, 'https://93.184.215.14/…');
    assert.equal((await storedConfig(created.json().id)).endpoint, endpoint);

    // Sent back exactly as read (or percent-encoded): the stored values stay, and so do the secret headers (the target did not change).
    for (const sent of [shown, shown.replaceAll('••••', encodeURIComponent('••••'))]) {
      const res = await api(app, owner).patch(url, { configJson: { endpoint: sent } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().configJson.endpoint, shown);
      assert.equal(res.json().configJson.headers.Authorization, '••••0005');
      assert.equal((await storedConfig(created.json().id)).endpoint, endpoint);
    }
    // A mask on a URL that changed elsewhere stands for nothing: 400 naming the field, nothing changed.
    const mismatch = 'body.configJson.endpoint: a masked query value (••••…) can only be sent back with the URL exactly as read; a changed URL needs its secret values in full';
    for (const sent of [shown.replace('/v1/', '/v2/'), shown.replace('region=eu', 'region=us'), shown.replace('••••0001', '••••9999')]) {
      const res = await api(app, owner).patch(url, { configJson: { endpoint: sent, headers: { Authorization: 'Bearer header-0006' } } });
      assert.deepEqual([res.statusCode, res.json()], [400, { message: mismatch }], sent);
    }
    assert.equal((await storedConfig(created.json().id)).endpoint, endpoint);
    // A new value in full replaces the stored one and is shown this once.
    const changed = endpoint.replace('query-key-0001', 'query-key-0007');
    const res = await api(app, owner).patch(url, { configJson: { endpoint: changed, headers: { Authorization: 'Bearer header-0006' } } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().configJson.endpoint, changed);
    assert.equal((await api(app, owner).get(url)).json().configJson.endpoint, shown.replace('••••0001', '••••0007'));
  });

  describe('with ALLOW_PRIVATE_TARGETS=false', () => {
    const strictSuite = suiteContext();
    let strict: TestApp;
    before(async () => {
      ({ app: strict } = await startTestApp(strictSuite, { ALLOW_PRIVATE_TARGETS: 'false' }));
    });

    it('refuses custom endpoints on loopback, private and link-local addresses, on create and update', async () => {
      const user = await registerUser(strict);
      const agentId = await newAgent(user, strict);
      const refused = ['http://127.0.0.1/x', 'http://169.254.169.254/latest', 'http://[::1]/', 'http://10.0.0.5/', 'http://localhost:8080/',
        'https://192.168.1.1/admin', 'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/'];
      for (const endpoint of refused) {
        const res = await api(strict, user).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'ssrf', configJson: { endpoint } });
        assert.equal(res.statusCode, 400, endpoint);
        assert.match(res.json().message, /^body\.configJson\.endpoint: must not point at a (private|loopback)/, endpoint);
      }
      const host = new URL(`http://${hostname()}/`).hostname; // resolves to a private address, like db.internal → 10.x
      const internal = await api(strict, user).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'ssrf', configJson: { endpoint: `http://${host}/` } });
      assert.deepEqual(internal.json(), { message: `body.configJson.endpoint: must not point at a private, loopback or link-local address (${host})` });
      assert.deepEqual((await api(strict, user).get(`/api/agents/${agentId}/tools`)).json(), []);

      const ok = await api(strict, user).post(`/api/agents/${agentId}/tools`, { type: 'custom', name: 'public', configJson: { endpoint: 'https://93.184.215.14/' } });
      assert.equal(ok.statusCode, 201, ok.body);
      const url = `/api/tools/${ok.json().id}`;
      for (const endpoint of refused.slice(0, 3)) {
        const res = await api(strict, user).patch(url, { configJson: { endpoint } });
        assert.equal(res.statusCode, 400, endpoint);
        assert.match(res.json().message, /^body\.configJson\.endpoint: /);
      }
      const fromOtherType = await api(strict, user).post(`/api/agents/${agentId}/tools`, coins);
      const switched = await api(strict, user).put(`/api/tools/${fromOtherType.json().id}`, { type: 'custom', configJson: { endpoint: 'http://10.0.0.5/' } });
      assert.equal(switched.statusCode, 400);
      assert.equal((await api(strict, user).get(url)).json().configJson.endpoint, 'https://93.184.215.14/', 'unchanged');
      assert.equal((await api(strict, user).patch(url, { name: 'renamed' })).statusCode, 200);
    });
  });
});
