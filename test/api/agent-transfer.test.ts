import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { suiteContext } from '../helpers/cleanup';
import { registerUser, startTestApp, type TestApp } from '../helpers/app';
import { accountIdOf, joinWorkspace } from '../helpers/workspaces';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Doc = {
  version: number;
  agent: Record<string, unknown>;
  tools: Record<string, unknown>[];
  connectors: Record<string, unknown>[];
  triggers: Record<string, unknown>[];
};

const SECRETS = {
  crmToken: 'Bearer crm-secret-token-0001',
  apiKey: 'x-api-key-secret-0002',
  slackBot: 'xoxb-slack-secret-0003',
  slackSigning: 'slack-signing-secret-0004',
  telegram: '123456:telegram-secret-0005',
  hookToken: 'hook-token-secret-0000000006',
};

/** Export and import of an agent with its tools, connectors and triggers. */
describe('agent export and import', () => {
  let app: TestApp;
  let db: Db;
  const suite = suiteContext();

  before(async () => {
    ({ app, db } = await startTestApp(suite, { QUOTA_TOOLS_PER_AGENT: '3' }));
  });

  const call = (headers: Record<string, string>, method: Method, url: string, payload?: unknown) =>
    app.inject({ method, url, headers, payload: payload as object });
  const ok = async (headers: Record<string, string>, method: Method, url: string, payload?: unknown) => {
    const res = await call(headers, method, url, payload);
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const count = async (sql: string, params: unknown[]) => Number((await db.query(sql, params)).rows[0].count);

  /** An agent with every kind of child, some holding secrets. */
  async function richAgent(headers: Record<string, string>) {
    const agent = await ok(headers, 'POST', '/api/agents', {
      name: 'Exported', goal: 'g', systemPrompt: 'sp', policies: ['be nice', { rule: 1 }], memoryConfig: { maxMessages: 7 },
      configJson: { model: 'x' }, status: 'active', graph: { nodes: [{ id: 'a', type: 'start' }, { id: 'b', type: 'end' }], edges: [{ source: 'a', target: 'b' }] },
    });
    await ok(headers, 'POST', `/api/agents/${agent.id}/tools`, {
      type: 'custom', name: 'crm', description: 'd', requiresApproval: true,
      configJson: { endpoint: 'https://crm.example.com/x', method: 'POST', headers: { Authorization: SECRETS.crmToken, 'X-Api-Key': SECRETS.apiKey, Accept: 'application/json' } },
    });
    await ok(headers, 'POST', `/api/agents/${agent.id}/tools`, { type: 'coin_prices', name: 'prices', configJson: { coinIds: ['bitcoin'] }, enabled: false });
    await ok(headers, 'POST', `/api/agents/${agent.id}/connectors`, {
      type: 'slack', name: 'slack', configJson: { botToken: SECRETS.slackBot, signingSecret: SECRETS.slackSigning, teamId: 'T1' },
    });
    await ok(headers, 'POST', `/api/agents/${agent.id}/connectors`, { type: 'telegram', name: 'tg', configJson: { botToken: SECRETS.telegram } });
    await ok(headers, 'POST', `/api/agents/${agent.id}/triggers`, { type: 'cron', name: 'daily', configJson: { cronExpression: '0 9 * * *', timezone: 'Europe/Paris' } });
    await ok(headers, 'POST', `/api/agents/${agent.id}/triggers`, { type: 'webhook', name: 'hook', configJson: { secretToken: SECRETS.hookToken } });
    await ok(headers, 'POST', `/api/agents/${agent.id}/triggers`, {
      type: 'event', name: 'on hook', configJson: { eventType: 'webhook.received', eventFilter: { 'payload.x': 1 } }, enabled: false,
    });
    return agent;
  }

  /** The export with its secrets filled in. */
  const filled = (doc: Doc): Doc => {
    const out = structuredClone(doc);
    const [crm] = out.tools as { configJson: { headers: Record<string, string> } }[];
    crm!.configJson.headers.Authorization = SECRETS.crmToken;
    crm!.configJson.headers['X-Api-Key'] = SECRETS.apiKey;
    Object.assign((out.connectors[0] as { configJson: object }).configJson, { botToken: SECRETS.slackBot, signingSecret: SECRETS.slackSigning });
    Object.assign((out.connectors[1] as { configJson: object }).configJson, { botToken: SECRETS.telegram });
    return out;
  };

  it('exports the agent and its children without ids, counters or secrets, saying where each secret was', async () => {
    const owner = await registerUser(app);
    const agent = await richAgent(owner.auth);
    const res = await call(owner.auth, 'GET', `/api/agents/${agent.id}/export`);
    assert.equal(res.statusCode, 200, res.body);
    const doc: Doc = res.json();
    assert.ok(res.body.includes('"id":"a"'), 'graph node ids are the agent\'s own data, kept');

    for (const secret of Object.values(SECRETS)) assert.ok(!res.body.includes(secret.slice(-8)), `secret ${secret} in the export`);
    assert.ok(!res.body.includes('••••'), 'secrets are absent, not masked');
    const { graph: _graph, ...rest } = doc.agent;
    const outsideGraph = JSON.stringify({ ...doc, agent: rest });
    for (const key of ['"id"', 'accountId', 'agentId', 'createdAt', 'updatedAt', 'fireCount', 'lastFired', 'nextFireAt', 'hookUrl', 'webhookPath']) {
      assert.ok(!outsideGraph.includes(key), `${key} in the export`);
    }
    const { rows } = await db.query('SELECT config_json FROM connectors WHERE agent_id = $1', [agent.id]);
    for (const r of rows) assert.ok(!res.body.includes(String(r.config_json.botToken).slice(0, 24)), 'no ciphertext either');

    assert.equal(doc.version, 1);
    assert.deepEqual(doc.agent, {
      name: 'Exported', description: '', goal: 'g', persona: '', voice: '', systemPrompt: 'sp', policies: ['be nice', { rule: 1 }],
      memoryConfig: { type: 'conversation', maxMessages: 7, ttlMinutes: 1440 }, configJson: { model: 'x' }, status: 'active',
      graph: { nodes: [{ id: 'a', type: 'start' }, { id: 'b', type: 'end' }], edges: [{ source: 'a', target: 'b' }] },
    });
    assert.deepEqual(doc.tools, [
      {
        type: 'custom', name: 'crm', description: 'd', enabled: true, requiresApproval: true, secrets: ['headers.Authorization', 'headers.X-Api-Key'],
        configJson: { endpoint: 'https://crm.example.com/x', method: 'POST', headers: { Accept: 'application/json' } },
      },
      { type: 'coin_prices', name: 'prices', description: '', enabled: false, requiresApproval: false, secrets: [], configJson: { coinIds: ['bitcoin'] } },
    ]);
    assert.deepEqual(doc.connectors, [
      { type: 'slack', name: 'slack', enabled: true, secrets: ['botToken', 'signingSecret'], configJson: { teamId: 'T1' } },
      { type: 'telegram', name: 'tg', enabled: true, secrets: ['botToken'], configJson: {} },
    ]);
    assert.deepEqual(doc.triggers, [
      { type: 'cron', name: 'daily', enabled: true, configJson: { cronExpression: '0 9 * * *', timezone: 'Europe/Paris', overlapPolicy: 'skip', catchupWindow: '1h' } },
      { type: 'webhook', name: 'hook', enabled: true, configJson: {} },
      { type: 'event', name: 'on hook', enabled: false, configJson: { eventType: 'webhook.received', eventFilter: { 'payload.x': 1 } } },
    ]);
    assert.equal((await call(owner.auth, 'GET', '/api/agents/00000000-0000-4000-8000-000000000000/export')).statusCode, 404);
    assert.equal((await call((await registerUser(app)).auth, 'GET', `/api/agents/${agent.id}/export`)).statusCode, 404, "another account's agent");
  });

  it('imports an export into another account in one go: same agent and children, charged like a create, audited, secrets shown once', async () => {
    const source = await registerUser(app);
    const agent = await richAgent(source.auth);
    const doc: Doc = await ok(source.auth, 'GET', `/api/agents/${agent.id}/export`);
    const target = await registerUser(app);
    const editor = await joinWorkspace(app, target, 'editor');
    const workspace = await accountIdOf(app, target);
    const balance = async () => Number((await db.query('SELECT balance FROM accounts WHERE id = $1', [workspace])).rows[0].balance);
    const before = await balance();

    const res = await call(editor.headers, 'POST', '/api/agents/import', filled(doc));
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.equal(created.agent.accountId, workspace);
    assert.notEqual(created.agent.id, agent.id);
    assert.deepEqual([created.tools.length, created.connectors.length, created.triggers.length], [2, 2, 3]);
    assert.equal(created.tools[0].configJson.headers.Authorization, SECRETS.crmToken, 'set by this request: shown in full once');
    assert.equal(created.connectors[0].configJson.botToken, SECRETS.slackBot);
    const hook = created.triggers[1];
    assert.match(hook.configJson.secretToken, /^[A-Za-z0-9_-]{43}$/, 'a new token, generated and shown once');
    assert.notEqual(hook.configJson.secretToken, SECRETS.hookToken);
    assert.match(hook.hookUrl, /\/api\/hooks\/triggers\/[0-9a-f]{24}$/);
    assert.ok(created.tools.every((t: { agentId: string }) => t.agentId === created.agent.id));
    assert.deepEqual(created.tools.map((t: { requiresApproval: boolean }) => t.requiresApproval), [true, false], 'requiresApproval kept');

    // The copy exports as the original did: nothing lost, nothing added.
    const again = await ok(target.auth, 'GET', `/api/agents/${created.agent.id}/export`);
    assert.deepEqual(again, doc);
    const read = await ok(target.auth, 'GET', `/api/connectors/${created.connectors[0].id}`);
    assert.match(read.configJson.botToken, /^••••/, 'stored like any secret: masked on read');

    assert.equal(await balance(), before - 100, 'charged like a create');
    const [charge] = await ok(target.auth, 'GET', '/api/account/transactions');
    assert.deepEqual([charge.reason, charge.resourceId, charge.actorUserId], ['agent.create', created.agent.id, editor.user.id]);
    const [entry] = await ok(target.auth, 'GET', '/api/account/audit');
    assert.deepEqual([entry.action, entry.resourceId, entry.actorUserId], ['agent.import', created.agent.id, editor.user.id]);
    assert.equal(await count(`SELECT count(*) FROM events WHERE account_id = $1 AND type = 'agent.created' AND data->>'agentId' = $2`, [workspace, created.agent.id]), 1);

    // A template imports free, as a template create is.
    const template = await call(target.auth, 'POST', '/api/agents/import', { ...filled(doc), agent: { ...doc.agent, status: 'template' } });
    assert.equal(template.statusCode, 201, template.body);
    assert.equal(await balance(), before - 100);
  });

  it('names every missing secret at once (400) and writes nothing', async () => {
    const owner = await registerUser(app);
    const doc: Doc = await ok(owner.auth, 'GET', `/api/agents/${(await richAgent(owner.auth)).id}/export`);
    const target = await registerUser(app);
    const accountId = await accountIdOf(app, target);
    const res = await call(target.auth, 'POST', '/api/agents/import', doc);
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), {
      message:
        'body.tools.0.configJson.headers.Authorization, body.tools.0.configJson.headers.X-Api-Key, body.connectors.0.configJson.botToken, ' +
        'body.connectors.0.configJson.signingSecret, body.connectors.1.configJson.botToken: are secrets the export left out; fill in each in full',
    });
    const partly = filled(doc);
    (partly.connectors[1]!.configJson as Record<string, unknown>).botToken = '';
    const one = await call(target.auth, 'POST', '/api/agents/import', partly);
    assert.equal(one.statusCode, 400);
    assert.equal(one.json().message, 'body.connectors.1.configJson.botToken: is a secret the export left out; fill in each in full');
    // Without the list, a connector's own required secrets are still named.
    const unlisted = filled(doc);
    delete (unlisted.connectors[0] as { secrets?: unknown }).secrets;
    delete (unlisted.connectors[0]!.configJson as Record<string, unknown>).signingSecret;
    assert.match((await call(target.auth, 'POST', '/api/agents/import', unlisted)).json().message, /^body\.connectors\.0\.configJson\.signingSecret: is a secret/);
    assert.equal(await count('SELECT count(*) FROM agents WHERE account_id = $1', [accountId]), 0);
  });

  it('leaves out every secret header and secret query value of a tool, even for a viewer allowed to export; an import asks for each', async () => {
    const owner = await registerUser(app);
    const agent = await ok(owner.auth, 'POST', '/api/agents', { name: 'Hidden', status: 'template' });
    const hidden = { cookie: 'session=cookie-0001-zzzz', xAuth: 'x-auth-0002-zzzz', apiKey: 'query-key-0003-zzzz', sig: 'query-sig-0004-zzzz' };
    const endpoint = `https://crm.example.com/x?api_key=${hidden.apiKey}&page=2&sig=${hidden.sig}`;
    const headers = { Cookie: hidden.cookie, 'X-Auth': hidden.xAuth, Accept: 'application/json', 'User-Agent': 'agent/1' };
    await ok(owner.auth, 'POST', `/api/agents/${agent.id}/tools`, { type: 'custom', name: 'crm', configJson: { endpoint, headers } });
    const viewer = await joinWorkspace(app, owner, 'viewer', { canExport: true });

    for (const who of [owner.auth, viewer.headers]) {
      const res = await call(who, 'GET', `/api/agents/${agent.id}/export`);
      assert.equal(res.statusCode, 200, res.body);
      for (const secret of Object.values(hidden)) assert.ok(!res.body.includes(secret.slice(0, 12)), `${secret} in the export`);
      assert.ok(!res.body.includes('••••'), 'absent, not masked');
      assert.deepEqual(res.json().tools, [
        {
          type: 'custom', name: 'crm', description: '', enabled: true, requiresApproval: false,
          secrets: ['headers.Cookie', 'headers.X-Auth', 'endpoint?api_key', 'endpoint?sig'],
          configJson: { endpoint: 'https://crm.example.com/x?api_key=&page=2&sig=', method: 'GET', headers: { Accept: 'application/json', 'User-Agent': 'agent/1' } },
        },
      ]);
    }

    const doc: Doc = await ok(owner.auth, 'GET', `/api/agents/${agent.id}/export`);
    const target = await registerUser(app);
    const missing = await call(target.auth, 'POST', '/api/agents/import', doc);
    assert.deepEqual([missing.statusCode, missing.json()], [400, {
      message:
        'body.tools.0.configJson.headers.Cookie, body.tools.0.configJson.headers.X-Auth, body.tools.0.configJson.endpoint?api_key, ' +
        'body.tools.0.configJson.endpoint?sig: are secrets the export left out; fill in each in full',
    }]);
    const half = structuredClone(doc);
    const tool = half.tools[0] as { configJson: { endpoint: string; headers: Record<string, string> } };
    Object.assign(tool.configJson.headers, { Cookie: hidden.cookie, 'X-Auth': hidden.xAuth });
    tool.configJson.endpoint = `https://crm.example.com/x?api_key=${hidden.apiKey}&page=2&sig=`;
    const one = await call(target.auth, 'POST', '/api/agents/import', half);
    assert.deepEqual([one.statusCode, one.json()], [400, { message: 'body.tools.0.configJson.endpoint?sig: is a secret the export left out; fill in each in full' }]);
    assert.equal(await count('SELECT count(*) FROM agents WHERE account_id = $1', [await accountIdOf(app, target)]), 0);

    tool.configJson.endpoint = endpoint;
    const imported = await call(target.auth, 'POST', '/api/agents/import', half);
    assert.equal(imported.statusCode, 201, imported.body);
    assert.deepEqual(imported.json().tools[0].configJson.headers, headers, 'set by this request: shown in full once');
    assert.equal(imported.json().tools[0].configJson.endpoint, endpoint);
    const read = await ok(target.auth, 'GET', `/api/tools/${imported.json().tools[0].id}`);
    assert.equal(read.configJson.endpoint, 'https://crm.example.com/x?api_key=••••zzzz&page=2&sig=••••zzzz');
    assert.deepEqual(read.configJson.headers, { Cookie: '••••zzzz', 'X-Auth': '••••zzzz', Accept: 'application/json', 'User-Agent': 'agent/1' });
  });

  it('is all or nothing: a bad child, a quota, a taken hook path or a short balance leaves no trace', async () => {
    const owner = await registerUser(app);
    const source = await richAgent(owner.auth);
    const doc = filled(await ok(owner.auth, 'GET', `/api/agents/${source.id}/export`));
    const target = await registerUser(app);
    const accountId = await accountIdOf(app, target);
    const balanceBefore = Number((await db.query('SELECT balance FROM accounts WHERE id = $1', [accountId])).rows[0].balance);
    const takenPath = (await ok(owner.auth, 'GET', `/api/agents/${source.id}/triggers`)).find((t: { type: string }) => t.type === 'webhook').configJson.webhookPath;

    const cases: [string, Doc, number, RegExp][] = [
      ['bad cron', { ...doc, triggers: [{ type: 'cron', name: 'x', configJson: { cronExpression: 'nope' } }] }, 400, /^body\.triggers\.0\.configJson\.cronExpression: /],
      ['bad tool', { ...doc, tools: [{ type: 'coin_prices', name: 'x', configJson: {} }] }, 400, /^body\.tools\.0\.configJson\.coinIds: is required/],
      ['masked secret', { ...doc, connectors: [{ type: 'telegram', name: 't', configJson: { botToken: '••••0005' } }] }, 400, /^body\.connectors\.0\.configJson\.botToken: a masked value/],
      ['over the tool quota (3)', { ...doc, tools: [...doc.tools, ...doc.tools] }, 403, /^at most 3 tools per agent$/],
      ['taken webhook path', { ...doc, triggers: [...doc.triggers, { type: 'webhook', name: 'w', configJson: { webhookPath: takenPath } }] }, 409, /webhookPath: is already in use/],
      ['version 2', { ...doc, version: 2 }, 400, /^body\.version: /],
      ['unknown field', { ...doc, ids: [] } as Doc, 400, /ids/],
      ['no agent name', { ...doc, agent: { ...doc.agent, name: '' } }, 400, /^body\.agent\.name: /],
    ];
    for (const [what, body, status, message] of cases) {
      const res = await call(target.auth, 'POST', '/api/agents/import', body);
      assert.equal(res.statusCode, status, `${what}: ${res.body}`);
      assert.match(res.json().message, message, what);
    }
    await db.query('UPDATE accounts SET balance = 99 WHERE id = $1', [accountId]);
    const short = await call(target.auth, 'POST', '/api/agents/import', doc);
    assert.equal(short.statusCode, 402);
    await db.query('UPDATE accounts SET balance = $2 WHERE id = $1', [accountId, balanceBefore]);

    for (const table of ['agents', 'tools', 'connectors', 'triggers', 'audit_log', 'events']) {
      assert.equal(await count(`SELECT count(*) FROM ${table} WHERE account_id = $1`, [accountId]), 0, table);
    }
    assert.equal(await count(`SELECT count(*) FROM account_transactions WHERE account_id = $1 AND reason <> 'initial_grant'`, [accountId]), 0);
  });

  it('needs canExport to export and a writing role to import', async () => {
    const owner = await registerUser(app);
    const agent = await richAgent(owner.auth);
    const doc = filled(await ok(owner.auth, 'GET', `/api/agents/${agent.id}/export`));
    const cases: ['admin' | 'editor' | 'viewer', Record<string, boolean> | undefined, number, number][] = [
      ['viewer', undefined, 403, 403],
      ['viewer', { canExport: true }, 200, 403],
      ['editor', { canExport: false }, 403, 201],
      ['editor', undefined, 200, 201],
      ['admin', undefined, 200, 201],
    ];
    for (const [role, permissions, exportStatus, importStatus] of cases) {
      const member = await joinWorkspace(app, owner, role, permissions);
      const exported = await call(member.headers, 'GET', `/api/agents/${agent.id}/export`);
      assert.equal(exported.statusCode, exportStatus, `${role} ${JSON.stringify(permissions)} export`);
      if (exportStatus === 403) assert.deepEqual(exported.json(), { message: 'canExport is required' });
      const imported = await call(member.headers, 'POST', '/api/agents/import', doc);
      assert.equal(imported.statusCode, importStatus, `${role} import: ${imported.body}`);
    }
  });
});
