import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { testSecretBox } from '../helpers/config';

/**
 * docs/api.md § Secrets across every resource that holds one: full only in the response to the request
 * that set it, masked in every later read, and never in plaintext anywhere in the database.
 */
describe('secrets at rest', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let user: TestUser;
  const secrets = {
    discord: 'discord-token-AAAA-1111',
    slackBot: 'xoxb-slack-bot-BBBB-2222',
    slackSigning: 'slack-signing-CCCC-3333',
    telegram: 'telegram-token-DDDD-4444',
    authorization: 'Bearer tool-bearer-EEEE-5555',
    apiKey: 'tool-api-key-FFFF-6666',
    // Named like no credential, a secret all the same: every tool header is one but Content-Type, Accept, Accept-Language, User-Agent.
    cookie: 'session=tool-cookie-IIII-9999',
    session: 'tool-session-JJJJ-0000',
    webhook: 'webhook-secret-GGGG-7777',
    triggerToken: 'trigger-token-HHHH-8888-long',
  };
  const reads: { url: string; list: string }[] = [];

  // Each create carries an Idempotency-Key: the stored first response (which shows the secret) must not leak it either.
  let key = 0;
  const create = async (url: string, list: string, payload: unknown) => {
    const headers = { 'idempotency-key': `create-${++key}` };
    const res = await api(app, user).post(url, payload, headers);
    assert.equal(res.statusCode, 201, res.body);
    const replay = await api(app, user).post(url, payload, headers);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, res.body, 'the replay is the first response');
    return res;
  };

  before(async () => {
    ({ app, db } = await startTestApp(suite));
    user = await registerUser(app);
    const agent = (await api(app, user).post('/api/agents', { name: 'Holder' })).json().id;
    const made = [
      await create(`/api/agents/${agent}/connectors`, `/api/agents/${agent}/connectors`, { type: 'discord', name: 'd', configJson: { botToken: secrets.discord, guildId: 'g' } }),
      await create(`/api/agents/${agent}/connectors`, `/api/agents/${agent}/connectors`, {
        type: 'slack', name: 's', configJson: { botToken: secrets.slackBot, signingSecret: secrets.slackSigning, teamId: 'T1' },
      }),
      await create(`/api/agents/${agent}/connectors`, `/api/agents/${agent}/connectors`, { type: 'telegram', name: 't', configJson: { botToken: secrets.telegram } }),
      await create(`/api/agents/${agent}/tools`, `/api/agents/${agent}/tools`, {
        type: 'custom', name: 'c',
        configJson: { endpoint: 'https://93.184.215.14/api', method: 'POST', headers: {
          Authorization: secrets.authorization, 'X-Api-Key': secrets.apiKey, Cookie: secrets.cookie, 'X-Session': secrets.session, Accept: 'application/json',
        } },
      }),
      await create('/api/webhooks', '/api/webhooks', { name: 'w', url: 'https://93.184.215.14/hook', secret: secrets.webhook, events: ['*'] }),
      await create('/api/user-triggers', '/api/user-triggers', { type: 'webhook', name: 'h', configJson: { secretToken: secrets.triggerToken } }),
    ];
    const lists = [`/api/agents/${agent}/connectors`, `/api/agents/${agent}/tools`, '/api/webhooks', '/api/user-triggers'];
    const itemBase: Record<string, string> = { connectors: '/api/connectors', tools: '/api/tools', webhooks: '/api/webhooks', 'user-triggers': '/api/user-triggers' };
    for (const res of made) {
      const { id } = res.json();
      const kind = res.json().direction ? 'webhooks' : res.json().configJson?.secretToken ? 'user-triggers' : res.json().configJson?.endpoint ? 'tools' : 'connectors';
      reads.push({ url: `${itemBase[kind]}/${id}`, list: lists.find((l) => l.endsWith(kind))! });
    }
    // The creating responses are the one place the values appear in full.
    const shown = made.map((r) => r.body).join('\n');
    for (const [name, value] of Object.entries(secrets)) assert.ok(shown.includes(value), `${name} not shown in full on create`);
    assert.ok(shown.includes('application/json'), 'a non-secret header is shown as written');
  });

  it('masks every secret in later reads and lists', async () => {
    for (const { url, list } of reads) {
      for (const target of [url, list]) {
        const body = (await api(app, user).get(target)).body;
        for (const [name, value] of Object.entries(secrets)) assert.ok(!body.includes(value), `${name} readable at ${target}`);
        assert.match(body, /••••/, `${target} shows no mask`);
      }
    }
  });

  it('masks by characters, never half of one: a secret ending in an emoji keeps its mask and round-trips it', async () => {
    // "🔑" is two UTF-16 code units: the last four units of this secret start with the second half of one.
    const emoji = 'emoji-token-🔑x🔑';
    const mask = '••••-🔑x🔑';
    const agent = (await api(app, user).post('/api/agents', { name: 'Emoji', status: 'template' })).json().id;
    const connector = (await api(app, user).post(`/api/agents/${agent}/connectors`, { type: 'telegram', name: 't', configJson: { botToken: emoji } })).json();
    const webhook = (await api(app, user).post('/api/webhooks', { name: 'w', url: 'https://93.184.215.14/hook', secret: emoji })).json();
    type Shown = { configJson: { botToken: string }; secret: string };
    const cases = [
      { url: `/api/connectors/${connector.id}`, shown: (b: Shown) => b.configJson.botToken, back: { configJson: { botToken: mask }, name: 'renamed' },
        stored: async () => testSecretBox.open((await db.query(`SELECT config_json->>'botToken' AS s FROM connectors WHERE id = $1`, [connector.id])).rows[0].s) },
      { url: `/api/webhooks/${webhook.id}`, shown: (b: Shown) => b.secret, back: { secret: mask, name: 'renamed' },
        stored: async () => testSecretBox.open((await db.query(`SELECT secret_sealed AS s FROM webhooks WHERE id = $1`, [webhook.id])).rows[0].s) },
    ];
    for (const c of cases) {
      const read = await api(app, user).get(c.url);
      const shown = c.shown(read.json());
      assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(shown), `${c.url}: the mask holds half a character`);
      assert.equal(shown, mask, c.url);
      const sentBack = await api(app, user).patch(c.url, c.back);
      assert.equal(sentBack.statusCode, 200, `${c.url}: ${sentBack.body}`);
      assert.equal(c.shown(sentBack.json()), mask, 'still masked: the request did not set it');
      assert.equal(await c.stored(), emoji, 'the secret is unchanged');
    }
  });

  it('keeps no plaintext secret in any table', async () => {
    const { rows: tables } = await db.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    assert.ok(tables.length >= 8);
    let dump = '';
    for (const { name } of tables) {
      const { rows } = await db.query<{ text: string | null }>(`SELECT string_agg(row_to_json(t)::text, E'\\n') AS text FROM "${name}" t`);
      dump += rows[0]?.text ?? '';
    }
    assert.ok(dump.includes('93.184.215.14'), 'the dump holds the resources');
    assert.ok(dump.includes('create-6'), 'the dump holds the idempotency records');
    for (const [name, value] of Object.entries(secrets)) {
      assert.ok(!dump.includes(value), `${name} stored in plaintext`);
      assert.ok(!dump.includes(value.slice(0, 12)), `${name} partly stored in plaintext`);
    }
  });
});
