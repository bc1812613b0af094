import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { api } from '../helpers/api';
import { readAllPages, registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { testSecretBox } from '../helpers/config';

describe('connectors (docs/api.md § Connectors and tools)', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;

  before(async () => {
    ({ app, db } = await startTestApp(suite));
  });

  const newAgent = async (user: TestUser) => (await api(app, user).post('/api/agents', { name: 'Host', status: 'template' })).json().id as string;
  const storedConfig = async (id: string) =>
    (await db.query<{ config_json: Record<string, string> }>('SELECT config_json FROM connectors WHERE id = $1', [id])).rows[0]!.config_json;

  const discord = { type: 'discord', name: 'Discord bot', configJson: { botToken: 'discord-token-0001-abcd', guildId: 'guild-1' } };
  const slack = {
    type: 'slack', name: 'Slack bot',
    configJson: { botToken: 'xoxb-slack-token-0002-efgh', signingSecret: 'slack-signing-0003-ijkl', teamId: 'T0001' },
  };
  const telegram = { type: 'telegram', name: 'Telegram bot', configJson: { botToken: '123456:telegram-token-mnop' } };

  it('creates each type, showing its secrets in full only in that response', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    for (const input of [discord, slack, telegram]) {
      const res = await api(app, user).post(`/api/agents/${agentId}/connectors`, input);
      assert.equal(res.statusCode, 201, res.body);
      const created = res.json();
      assert.match(created.id, /^[0-9a-f-]{36}$/);
      assert.equal(created.agentId, agentId);
      assert.match(created.accountId, /^[0-9a-f-]{36}$/);
      assert.equal(created.type, input.type);
      assert.equal(created.name, input.name);
      assert.equal(created.enabled, true, 'enabled defaults to true');
      assert.deepEqual(created.configJson, input.configJson, 'full secrets in the creating response');
      assert.ok(created.createdAt.endsWith('Z') && created.updatedAt.endsWith('Z'));

      const read = (await api(app, user).get(`/api/connectors/${created.id}`)).json();
      const masked = Object.fromEntries(
        Object.entries(input.configJson).map(([k, v]) => [k, ['botToken', 'signingSecret'].includes(k) ? `••••${v.slice(-4)}` : v]),
      );
      assert.deepEqual(read.configJson, masked, `${input.type} masked on GET`);
      assert.deepEqual({ ...read, configJson: null }, { ...created, configJson: null });
    }
    const list = await api(app, user).get(`/api/agents/${agentId}/connectors`);
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().map((c: { type: string }) => c.type), ['telegram', 'slack', 'discord'], 'newest first');
    for (const secret of ['discord-token-0001-abcd', 'xoxb-slack-token-0002-efgh', 'slack-signing-0003-ijkl', '123456:telegram-token-mnop']) {
      assert.ok(!list.body.includes(secret), 'masked in the list');
    }
    assert.match(list.body, /••••abcd/);
  });

  it('trims the name and keeps enabled: false', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const res = await api(app, user).post(`/api/agents/${agentId}/connectors`, { ...telegram, name: '  spaced  ', enabled: false });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().name, 'spaced');
    assert.equal(res.json().enabled, false);
  });

  it('validates the body and each type\'s config, naming the field', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const cases: [unknown, RegExp][] = [
      [{ ...discord, type: 'irc' }, /^body\.type: must be one of discord, slack, telegram$/],
      [{ name: 'x', configJson: {} }, /^body\.type: is required$/],
      [{ ...discord, configJson: { botToken: 'x' } }, /^body\.configJson\.guildId: is required$/],
      [{ ...discord, configJson: { guildId: 'g' } }, /^body\.configJson\.botToken: is required$/],
      [{ ...discord, configJson: { ...discord.configJson, guildId: '' } }, /^body\.configJson\.guildId: /],
      [{ ...discord, configJson: { ...discord.configJson, guildId: 'g'.repeat(101) } }, /^body\.configJson\.guildId: /],
      [{ ...discord, configJson: { ...discord.configJson, botToken: 't'.repeat(501) } }, /^body\.configJson\.botToken: /],
      [{ ...discord, configJson: { ...discord.configJson, botToken: 42 } }, /^body\.configJson\.botToken: /],
      [{ ...discord, configJson: { ...discord.configJson, extra: 1 } }, /^body\.configJson: .*extra/],
      [{ ...slack, configJson: { botToken: 'b', teamId: 'T' } }, /^body\.configJson\.signingSecret: is required$/],
      [{ ...slack, configJson: { botToken: 'b', signingSecret: 's' } }, /^body\.configJson\.teamId: is required$/],
      [{ ...telegram, configJson: { botToken: 'b', guildId: 'g' } }, /^body\.configJson: .*guildId/],
      [{ ...telegram, configJson: {} }, /^body\.configJson\.botToken: is required$/],
      [{ type: 'telegram', name: 'x' }, /^body\.configJson: is required$/],
      [{ type: 'telegram', configJson: telegram.configJson }, /^body\.name: is required$/],
      [{ ...telegram, name: '   ' }, /^body\.name: /],
      [{ ...telegram, name: 'n'.repeat(201) }, /^body\.name: /],
      [{ ...telegram, enabled: 'yes' }, /^body\.enabled: /],
      [{ ...telegram, id: randomUUID() }, /^body: .*id/],
      [{ ...telegram, configJson: { botToken: '••••mnop' } }, /^body\.configJson\.botToken: a masked value/],
    ];
    for (const [payload, message] of cases) {
      const res = await api(app, user).post(`/api/agents/${agentId}/connectors`, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.deepEqual(Object.keys(res.json()), ['message']);
      assert.match(res.json().message, message, JSON.stringify(payload));
    }
    assert.deepEqual((await api(app, user).get(`/api/agents/${agentId}/connectors`)).json(), [], 'nothing written');
  });

  it('updates partially with PUT and PATCH, merging configJson', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const created = (await api(app, user).post(`/api/agents/${agentId}/connectors`, discord)).json();

    const put = await api(app, user).put(`/api/connectors/${created.id}`, { enabled: false });
    assert.equal(put.statusCode, 200);
    assert.equal(put.json().enabled, false);
    assert.equal(put.json().name, 'Discord bot');
    assert.deepEqual(put.json().configJson, { botToken: '••••abcd', guildId: 'guild-1' }, 'untouched secret stays masked');

    const patch = await api(app, user).patch(`/api/connectors/${created.id}`, { name: 'Renamed', configJson: { guildId: 'guild-2' } });
    assert.equal(patch.statusCode, 200);
    assert.equal(patch.json().name, 'Renamed');
    assert.equal(patch.json().enabled, false);
    assert.deepEqual(patch.json().configJson, { botToken: '••••abcd', guildId: 'guild-2' });
    assert.ok(Date.parse(patch.json().updatedAt) >= Date.parse(created.updatedAt));
    assert.equal(testSecretBox.open((await storedConfig(created.id)).botToken!), 'discord-token-0001-abcd', 'merge kept the secret');

    const read = (await api(app, user).get(`/api/connectors/${created.id}`)).json();
    assert.deepEqual(read.configJson, { botToken: '••••abcd', guildId: 'guild-2' });
  });

  it('shows a changed secret once, keeps a masked one, and refuses a wrong mask', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const created = (await api(app, user).post(`/api/agents/${agentId}/connectors`, slack)).json();
    const url = `/api/connectors/${created.id}`;

    const changed = await api(app, user).patch(url, { configJson: { signingSecret: 'new-signing-secret-wxyz' } });
    assert.equal(changed.statusCode, 200);
    assert.deepEqual(changed.json().configJson, { botToken: '••••efgh', signingSecret: 'new-signing-secret-wxyz', teamId: 'T0001' });
    assert.deepEqual((await api(app, user).get(url)).json().configJson, { botToken: '••••efgh', signingSecret: '••••wxyz', teamId: 'T0001' });

    // The whole config as read (masked) sent back: nothing changes, nothing is revealed.
    const echoed = await api(app, user).put(url, { configJson: { botToken: '••••efgh', signingSecret: '••••wxyz', teamId: 'T0002' } });
    assert.equal(echoed.statusCode, 200);
    assert.deepEqual(echoed.json().configJson, { botToken: '••••efgh', signingSecret: '••••wxyz', teamId: 'T0002' });
    const stored = await storedConfig(created.id);
    assert.equal(testSecretBox.open(stored.botToken!), 'xoxb-slack-token-0002-efgh');
    assert.equal(testSecretBox.open(stored.signingSecret!), 'new-signing-secret-wxyz');

    const wrongMask = await api(app, user).patch(url, { configJson: { botToken: '••••zzzz' } });
    assert.equal(wrongMask.statusCode, 400);
    assert.match(wrongMask.json().message, /^body\.configJson\.botToken: a masked value/);
    assert.equal(testSecretBox.open((await storedConfig(created.id)).botToken!), 'xoxb-slack-token-0002-efgh');
  });

  it('re-validates the merged config and handles type changes', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const created = (await api(app, user).post(`/api/agents/${agentId}/connectors`, discord)).json();
    const url = `/api/connectors/${created.id}`;
    const cases: [unknown, RegExp][] = [
      [{ configJson: { guildId: null } }, /^body\.configJson\.guildId: is required$/],
      [{ configJson: { teamId: 'T' } }, /^body\.configJson: .*teamId/],
      [{ configJson: { botToken: '' } }, /^body\.configJson\.botToken: /],
      [{ type: 'telegram' }, /^body\.configJson: is required when type changes/],
      [{ type: 'slack', configJson: { botToken: 'x' } }, /^body\.configJson\.signingSecret: is required$/],
      [{ type: 'matrix', configJson: {} }, /^body\.type: /],
      [{ name: '' }, /^body\.name: /],
      [{ enabled: null }, /^body\.enabled: /],
      [{ accountId: randomUUID() }, /^body: .*accountId/],
      // A null for a field the type does not have, which the merge alone would drop unremarked (schemathesis).
      [{ configJson: { signingSecret: null } }, /^body\.configJson: Unrecognized key: "signingSecret"$/],
      [{ type: 'telegram', configJson: { botToken: 'telegram-token-0001', guildId: null } }, /^body\.configJson: Unrecognized key: "guildId"$/],
    ];
    for (const [payload, message] of cases) {
      for (const method of ['PUT', 'PATCH'] as const) {
        const res = await api(app, user).request(method, url, payload);
        assert.equal(res.statusCode, 400, `${method} ${JSON.stringify(payload)}`);
        assert.match(res.json().message, message, JSON.stringify(payload));
      }
    }
    assert.deepEqual((await api(app, user).get(url)).json(), { ...created, configJson: { botToken: '••••abcd', guildId: 'guild-1' } }, 'unchanged');

    // Same type named again: still a merge.
    const sameType = await api(app, user).patch(url, { type: 'discord', configJson: { guildId: 'guild-3' } });
    assert.deepEqual(sameType.json().configJson, { botToken: '••••abcd', guildId: 'guild-3' });

    // A new type: the config is replaced, not merged, and a mask can't carry the old type's secret over.
    const masked = await api(app, user).patch(url, { type: 'telegram', configJson: { botToken: '••••abcd' } });
    assert.equal(masked.statusCode, 400, masked.body);
    assert.match(masked.json().message, /^body\.configJson\.botToken: a masked value/);
    const switched = await api(app, user).patch(url, { type: 'telegram', configJson: { botToken: 'telegram-token-0002-wxyz' } });
    assert.equal(switched.statusCode, 200, switched.body);
    assert.equal(switched.json().type, 'telegram');
    assert.deepEqual(switched.json().configJson, { botToken: 'telegram-token-0002-wxyz' });
    assert.deepEqual(Object.keys(await storedConfig(created.id)), ['botToken']);
    assert.equal(testSecretBox.open((await storedConfig(created.id)).botToken!), 'telegram-token-0002-wxyz');

    const toSlack = await api(app, user).put(url, { type: 'slack', configJson: { botToken: 'xoxb-new-token-9999', signingSecret: 'sign-new-8888', teamId: 'T9' } });
    assert.equal(toSlack.statusCode, 200);
    assert.deepEqual(toSlack.json().configJson, { botToken: 'xoxb-new-token-9999', signingSecret: 'sign-new-8888', teamId: 'T9' });
  });

  it('deletes with 204, then 404 on every item route', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const created = (await api(app, user).post(`/api/agents/${agentId}/connectors`, telegram)).json();
    const url = `/api/connectors/${created.id}`;
    const del = await api(app, user).delete(url);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await api(app, user).request(method, url, method === 'PUT' || method === 'PATCH' ? { name: 'x' } : undefined);
      assert.equal(res.statusCode, 404, method);
      assert.deepEqual(res.json(), { message: 'Connector not found' });
    }
    assert.deepEqual((await api(app, user).get(`/api/agents/${agentId}/connectors`)).json(), []);
  });

  it('pages newest first with a Link header until the end', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const otherAgent = await newAgent(user);
    await api(app, user).post(`/api/agents/${otherAgent}/connectors`, telegram);
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await api(app, user).post(`/api/agents/${agentId}/connectors`, { ...telegram, name: `c${i}` })).json().id);
    const { ids, pages, sizes } = await readAllPages(app, user, `/api/agents/${agentId}/connectors?limit=3`);
    assert.ok(sizes.every((size) => size <= 3));
    assert.equal(pages, 3);
    assert.deepEqual(ids, [...created].reverse(), 'only this agent\'s connectors, no gaps or repeats');
    const bad = await api(app, user).get(`/api/agents/${agentId}/connectors?cursor=nope`);
    assert.equal(bad.statusCode, 400);
  });

  it('shows one account nothing of another\'s: 404 on every route, absent from lists', async () => {
    const owner = await registerUser(app);
    const stranger = await registerUser(app);
    const agentId = await newAgent(owner);
    const strangerAgent = await newAgent(stranger);
    const connector = (await api(app, owner).post(`/api/agents/${agentId}/connectors`, discord)).json();
    for (const [method, url, body] of [
      ['GET', `/api/connectors/${connector.id}`], ['PUT', `/api/connectors/${connector.id}`, { name: 'x' }],
      ['PATCH', `/api/connectors/${connector.id}`, { enabled: false }], ['DELETE', `/api/connectors/${connector.id}`],
    ] as const) {
      const res = await api(app, stranger).request(method, url, body);
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.deepEqual(res.json(), { message: 'Connector not found' });
    }
    for (const agent of [agentId, randomUUID()]) {
      for (const [method, body] of [['GET'], ['POST', telegram]] as const) {
        const res = await api(app, stranger).request(method, `/api/agents/${agent}/connectors`, body);
        assert.equal(res.statusCode, 404, `${method} connectors of ${agent}`);
        assert.deepEqual(res.json(), { message: 'Agent not found' });
      }
    }
    for (const url of ['/api/connectors/not-a-uuid', '/api/agents/not-a-uuid/connectors']) {
      assert.equal((await api(app, owner).get(url)).statusCode, 404, url);
    }
    assert.deepEqual((await api(app, stranger).get(`/api/agents/${strangerAgent}/connectors`)).json(), []);
    const still = (await api(app, owner).get(`/api/connectors/${connector.id}`)).json();
    assert.equal(still.name, 'Discord bot');
    assert.equal(still.enabled, true);
    assert.equal((await api(app, owner).get(`/api/agents/${agentId}/connectors`)).json().length, 1);
  });

  it('goes with its agent: after DELETE /api/agents/:id the connector answers 404', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const ids = [];
    for (const input of [discord, slack]) ids.push((await api(app, user).post(`/api/agents/${agentId}/connectors`, input)).json().id as string);
    assert.equal((await api(app, user).get(`/api/connectors/${ids[0]}`)).statusCode, 200);
    assert.equal((await api(app, user).delete(`/api/agents/${agentId}`)).statusCode, 204);
    for (const id of ids) assert.equal((await api(app, user).get(`/api/connectors/${id}`)).statusCode, 404);
    assert.equal((await api(app, user).get(`/api/agents/${agentId}/connectors`)).statusCode, 404);
    const { rows } = await db.query('SELECT 1 FROM connectors WHERE id = ANY($1)', [ids]);
    assert.equal(rows.length, 0);
  });

  it('stores secrets sealed: no plaintext in the row, and the secret box opens them back', async () => {
    const user = await registerUser(app);
    const agentId = await newAgent(user);
    const ids: Record<string, string> = {};
    for (const input of [discord, slack, telegram]) ids[input.type] = (await api(app, user).post(`/api/agents/${agentId}/connectors`, input)).json().id;
    const { rows } = await db.query<{ id: string; text: string }>('SELECT id, config_json::text AS text FROM connectors WHERE id = ANY($1)', [
      Object.values(ids),
    ]);
    assert.equal(rows.length, 3);
    const raw = rows.map((r) => r.text).join('\n');
    for (const secret of [discord.configJson.botToken, slack.configJson.botToken, slack.configJson.signingSecret, telegram.configJson.botToken]) {
      assert.ok(!raw.includes(secret), `${secret} stored in plaintext`);
      assert.ok(!raw.includes(secret.slice(0, 10)), `${secret} partly stored in plaintext`);
    }
    assert.ok(raw.includes('guild-1') && raw.includes('T0001'), 'non-secret fields are stored as written');
    const opened = async (type: string) => {
      const config = JSON.parse(rows.find((r) => r.id === ids[type])!.text) as Record<string, string>;
      return Object.fromEntries(Object.entries(config).map(([k, v]) => [k, ['botToken', 'signingSecret'].includes(k) ? testSecretBox.open(v) : v]));
    };
    assert.deepEqual(await opened('discord'), discord.configJson);
    assert.deepEqual(await opened('slack'), slack.configJson);
    assert.deepEqual(await opened('telegram'), telegram.configJson);
  });
});
