import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { maskSecret } from '../../lib/secrets';
import { api } from '../helpers/api';
import { readAllPages, registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { testSecretBox } from '../helpers/config';

/** Agent triggers: /api/agents/:agentId/triggers and /api/triggers/:id (docs/api.md § Triggers). */
describe('agent triggers', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;

  before(async () => {
    ({ app, db } = await startTestApp(suite));
  });

  const newAgent = async (user: TestUser) => (await api(app, user).post('/api/agents', { name: 'Agent', status: 'template' })).json().id as string;
  const create = async (user: TestUser, agentId: string, body: Record<string, unknown>) => {
    const res = await api(app, user).post(`/api/agents/${agentId}/triggers`, { name: 'T', ...body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const storedConfig = async (id: string) =>
    (await db.query<{ config_json: Record<string, unknown> }>('SELECT config_json FROM triggers WHERE id = $1', [id])).rows[0]!.config_json;
  /** Local wall-clock time of an instant in a zone, "HH:MM:SS". */
  const wallClock = (iso: string, timeZone: string) =>
    new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(new Date(iso));

  let user: TestUser;
  let agent: string;
  before(async () => {
    user = await registerUser(app);
    agent = await newAgent(user);
  });

  it('creates every type, filling in and storing the defaults', async () => {
    const accountId = (await api(app, user).get('/api/account')).json().id;
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [
        { type: 'cron', configJson: { cronExpression: '0 9 * * *' } },
        { cronExpression: '0 9 * * *', timezone: 'UTC', overlapPolicy: 'skip', catchupWindow: '1h' },
      ],
      [
        { type: 'schedule', configJson: { cronExpression: '@every 1h30m', timezone: 'Europe/Berlin', overlapPolicy: 'buffer_all', catchupWindow: '10m' } },
        { cronExpression: '@every 1h30m', timezone: 'Europe/Berlin', overlapPolicy: 'buffer_all', catchupWindow: '10m' },
      ],
      [{ type: 'schedule', configJson: { cronExpression: '@daily', timezone: 'america/new_york' } }, {
        cronExpression: '@daily', timezone: 'America/New_York', overlapPolicy: 'skip', catchupWindow: '1h',
      }],
      [
        { type: 'event', configJson: { eventType: 'agent.failed', eventFilter: { agentId: agent, 'data.n': 2, ok: true, x: null, runId: { $regex: '^r' } } } },
        { eventType: 'agent.failed', eventFilter: { agentId: agent, 'data.n': 2, ok: true, x: null, runId: { $regex: '^r' } } },
      ],
      [{ type: 'event', configJson: { eventType: 'webhook.received' } }, { eventType: 'webhook.received', eventFilter: {} }],
      [{ type: 'agent_finished' }, { eventType: 'agent.completed', eventFilter: {} }],
      [
        { type: 'agent_output', configJson: { eventFilter: { output: { $contains: 'ALERT' } } } },
        { eventType: 'agent.completed', eventFilter: { output: { $contains: 'ALERT' } } },
      ],
    ];
    for (const [body, config] of cases) {
      const created = await create(user, agent, body);
      assert.deepEqual(created.configJson, config, JSON.stringify(body));
      assert.equal(created.type, body.type);
      assert.equal(created.agentId, agent);
      assert.equal(created.accountId, accountId);
      assert.equal(created.enabled, true);
      assert.equal(created.fireCount, 0);
      assert.equal(created.lastFired, null);
      assert.equal(created.hookUrl, null);
      assert.equal(typeof created.nextFireAt, body.type === 'cron' || body.type === 'schedule' ? 'string' : 'object');
      assert.ok(created.createdAt.endsWith('Z') && created.updatedAt.endsWith('Z'));
      assert.deepEqual(await storedConfig(created.id), config, 'defaults are stored');
      const read = await api(app, user).get(`/api/triggers/${created.id}`);
      assert.equal(read.statusCode, 200);
      assert.deepEqual(read.json(), created);
    }
  });

  it('creates webhook triggers with a generated path and token, shown in full only once', async () => {
    const created = await create(user, agent, { type: 'webhook', name: ' Inbound ' });
    assert.equal(created.name, 'Inbound', 'name is trimmed');
    const { webhookPath, secretToken } = created.configJson;
    assert.match(webhookPath, /^[0-9a-f]{24}$/);
    assert.match(secretToken, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
    assert.equal(created.hookUrl, `http://localhost:3000/api/hooks/triggers/${webhookPath}`);
    assert.equal(created.nextFireAt, null);
    const read = (await api(app, user).get(`/api/triggers/${created.id}`)).json();
    assert.deepEqual(read.configJson, { webhookPath, secretToken: maskSecret(secretToken) });
    assert.equal(read.hookUrl, created.hookUrl);
    const other = await create(user, agent, { type: 'webhook' });
    assert.notEqual(other.configJson.webhookPath, webhookPath);
    assert.notEqual(other.configJson.secretToken, secretToken);

    const chosen = await create(user, agent, { type: 'webhook', configJson: { webhookPath: 'deploy-hook_1', secretToken: 'chosen-token-0123456789' } });
    assert.deepEqual(chosen.configJson, { webhookPath: 'deploy-hook_1', secretToken: 'chosen-token-0123456789' });
    assert.equal(chosen.hookUrl, 'http://localhost:3000/api/hooks/triggers/deploy-hook_1');
  });

  it('refuses invalid bodies and configs with a message naming the field, creating nothing', async () => {
    const own = await newAgent(user);
    const cron = (configJson: Record<string, unknown>) => ({ type: 'cron', name: 'c', configJson: { cronExpression: '0 9 * * *', ...configJson } });
    const cases: [unknown, RegExp][] = [
      [{ type: 'cron' }, /^body\.name: is required$/],
      [{ name: 'x' }, /^body\.type:/],
      [{ type: 'cron', name: '   ', configJson: { cronExpression: '* * * * *' } }, /^body\.name:/],
      [{ type: 'cron', name: 'x'.repeat(201), configJson: { cronExpression: '* * * * *' } }, /^body\.name:/],
      [{ type: 'sometimes', name: 'x' }, /^body\.type:/],
      [{ type: 'webhook', name: 'x', enabled: 'yes' }, /^body\.enabled:/],
      [{ type: 'webhook', name: 'x', agentId: own }, /agentId/],
      [{ type: 'webhook', name: 'x', extra: 1 }, /extra/],
      [{ type: 'webhook', name: 'x', configJson: [] }, /^body\.configJson:/],
      [{ type: 'webhook', name: 'x', configJson: 'path' }, /^body\.configJson:/],
      [{ type: 'cron', name: 'c', configJson: {} }, /^body\.configJson\.cronExpression: is required$/],
      [{ type: 'schedule', name: 'c' }, /^body\.configJson\.cronExpression: is required$/],
      [cron({ cronExpression: 42 }), /^body\.configJson\.cronExpression:/],
      [cron({ cronExpression: '61 * * * *' }), /^body\.configJson\.cronExpression: Constraint error, got value 61/],
      [cron({ cronExpression: '0 0 0 * * * 2030' }), /^body\.configJson\.cronExpression: a year field is not supported/],
      [cron({ cronExpression: '0 0 1 * 1' }), /^body\.configJson\.cronExpression: day-of-month and day-of-week cannot both be restricted/],
      [cron({ cronExpression: '0 0 L * *' }), /^body\.configJson\.cronExpression: day-of-month field "L" is not supported/],
      [cron({ cronExpression: '@fortnightly' }), /^body\.configJson\.cronExpression: unknown macro/],
      [cron({ cronExpression: '@every 0s' }), /^body\.configJson\.cronExpression: @every needs an interval of at least 1s/],
      [cron({ cronExpression: '@every soon' }), /^body\.configJson\.cronExpression: @every "soon" is not a duration/],
      [cron({ cronExpression: '*/5 '.repeat(60) }), /^body\.configJson\.cronExpression: .*200/],
      [cron({ timezone: 'Mars/Base' }), /^body\.configJson\.timezone: unknown IANA time zone "Mars\/Base"$/],
      [cron({ timezone: '+02:00' }), /^body\.configJson\.timezone: unknown IANA time zone/],
      [cron({ overlapPolicy: 'sometimes' }), /^body\.configJson\.overlapPolicy:/],
      [cron({ catchupWindow: '5s' }), /^body\.configJson\.catchupWindow: must be at least 10s$/],
      [cron({ catchupWindow: '366d' }), /^body\.configJson\.catchupWindow: must be at most 365d$/],
      [cron({ catchupWindow: '1 hour' }), /^body\.configJson\.catchupWindow: "1 hour" is not a duration/],
      [cron({ eventType: 'agent.completed' }), /^body\.configJson: Unrecognized key: "eventType"$/],
      [{ type: 'webhook', name: 'w', configJson: { webhookPath: 'ab' } }, /^body\.configJson\.webhookPath: must be 3–100 characters/],
      [{ type: 'webhook', name: 'w', configJson: { webhookPath: 'Upper-Case' } }, /^body\.configJson\.webhookPath:/],
      [{ type: 'webhook', name: 'w', configJson: { webhookPath: '-leading' } }, /^body\.configJson\.webhookPath:/],
      [{ type: 'webhook', name: 'w', configJson: { webhookPath: 'has/slash' } }, /^body\.configJson\.webhookPath:/],
      [{ type: 'webhook', name: 'w', configJson: { webhookPath: 'a'.repeat(101) } }, /^body\.configJson\.webhookPath:/],
      [{ type: 'webhook', name: 'w', configJson: { secretToken: 'too-short' } }, /^body\.configJson\.secretToken: Too small/],
      [{ type: 'webhook', name: 'w', configJson: { secretToken: 'x'.repeat(257) } }, /^body\.configJson\.secretToken: Too big/],
      [{ type: 'webhook', name: 'w', configJson: { secretToken: 'has a space in the token' } }, /^body\.configJson\.secretToken: must be printable ASCII/],
      [{ type: 'webhook', name: 'w', configJson: { secretToken: '••••abcd' } }, /^body\.configJson\.secretToken: a masked value can only be sent back unchanged/],
      [{ type: 'webhook', name: 'w', configJson: { url: 'x' } }, /^body\.configJson: Unrecognized key: "url"$/],
      [{ type: 'event', name: 'e' }, /^body\.configJson\.eventType: is required$/],
      [{ type: 'event', name: 'e', configJson: { eventType: 'agent.exploded' } }, /^body\.configJson\.eventType:/],
      [{ type: 'agent_output', name: 'e', configJson: { eventFilter: [] } }, /^body\.configJson\.eventFilter:/],
      [{ type: 'agent_output', name: 'e', configJson: { eventFilter: { output: { $regex: '(' } } } }, /^body\.configJson\.eventFilter\.output\.\$regex: invalid or unsupported regular expression \(RE2 syntax/],
      [
        { type: 'event', name: 'e', configJson: { eventType: 'agent.created', eventFilter: { msg: { $regex: 'a(?=b)' } } } },
        /^body\.configJson\.eventFilter\.msg\.\$regex: invalid or unsupported regular expression \(RE2 syntax: no lookaround or backreferences\): invalid or unsupported Perl syntax: `\(\?=`$/,
      ],
      [{ type: 'agent_finished', name: 'e', configJson: { eventFilter: { 'output.x': { $contains: 1 } } } }, /^body\.configJson\.eventFilter\.output\.x\.\$contains: must be a string$/],
      [{ type: 'event', name: 'e', configJson: { eventType: 'agent.created', eventFilter: { $where: 'x' } } }, /^body\.configJson\.eventFilter\.\$where: is not a valid path/],
      [{ type: 'event', name: 'e', configJson: { eventType: 'agent.created', eventFilter: { a: [1, 2] } } }, /^body\.configJson\.eventFilter\.a: must be a string, number, boolean or null/],
      [{ type: 'event', name: 'e', configJson: { eventType: 'agent.created', eventFilter: { a: { $contains: 'x', $regex: 'y' } } } }, /^body\.configJson\.eventFilter\.a: .*exactly one operator/],
    ];
    for (const [payload, message] of cases) {
      const res = await api(app, user).post(`/api/agents/${own}/triggers`, payload);
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload).slice(0, 100)} → ${res.statusCode} ${res.body}`);
      assert.deepEqual(Object.keys(res.json()), ['message']);
      assert.match(res.json().message, message, JSON.stringify(payload).slice(0, 100));
    }
    assert.deepEqual((await api(app, user).get(`/api/agents/${own}/triggers`)).json(), []);
  });

  it('computes nextFireAt from the expression and the time zone', async () => {
    const before = Date.now();
    const ny = await create(user, agent, { type: 'cron', configJson: { cronExpression: '0 9 * * *', timezone: 'America/New_York' } });
    const next = Date.parse(ny.nextFireAt);
    assert.equal(wallClock(ny.nextFireAt, 'America/New_York'), '09:00:00', 'nine o\'clock in New York');
    assert.ok(next > before && next <= before + 25 * 3600_000, 'the next one, not a later one');
    assert.ok(['13:00:00', '14:00:00'].includes(wallClock(ny.nextFireAt, 'UTC')), 'as a UTC instant');

    const seconds = await create(user, agent, { type: 'cron', configJson: { cronExpression: '*/2 * * * * *' } });
    const s = Date.parse(seconds.nextFireAt);
    assert.ok(s > before && s <= Date.now() + 2000, `${seconds.nextFireAt} within 2 s of now`);
    assert.equal(new Date(s).getUTCSeconds() % 2, 0);
    assert.equal(s % 1000, 0);

    const every = await create(user, agent, { type: 'schedule', configJson: { cronExpression: '@every 5m', timezone: 'Asia/Kolkata' } });
    const e = Date.parse(every.nextFireAt);
    assert.equal(e % 300_000, 0, 'aligned to 5-minute multiples of the epoch');
    assert.ok(e > before && e <= Date.now() + 300_000);

    const disabled = await create(user, agent, { type: 'cron', enabled: false, configJson: { cronExpression: '* * * * *' } });
    assert.equal(disabled.nextFireAt, null);
    const enabled = (await api(app, user).patch(`/api/triggers/${disabled.id}`, { enabled: true })).json();
    assert.equal(wallClock(enabled.nextFireAt, 'UTC').slice(-2), '00', 'on a minute');
    assert.equal((await api(app, user).get(`/api/triggers/${disabled.id}`)).json().nextFireAt !== null, true);
    assert.equal((await api(app, user).put(`/api/triggers/${disabled.id}`, { enabled: false })).json().nextFireAt, null);

    // A new time zone moves the next fire.
    const moved = (await api(app, user).patch(`/api/triggers/${ny.id}`, { configJson: { timezone: 'Asia/Tokyo' } })).json();
    assert.equal(wallClock(moved.nextFireAt, 'Asia/Tokyo'), '09:00:00');
    assert.equal(moved.configJson.cronExpression, '0 9 * * *');
  });

  it('keeps webhook paths unique across all accounts (409), and frees them on delete', async () => {
    const other = await registerUser(app);
    const otherAgent = await newAgent(other);
    const first = await create(user, agent, { type: 'webhook', configJson: { webhookPath: 'shared-path' } });
    for (const [who, url] of [[other, `/api/agents/${otherAgent}/triggers`], [other, '/api/user-triggers'], [user, `/api/agents/${agent}/triggers`]] as const) {
      const clash = await api(app, who).post(url, { type: 'webhook', name: 'w', configJson: { webhookPath: 'shared-path' } });
      assert.equal(clash.statusCode, 409, `${url}: ${clash.body}`);
      assert.deepEqual(clash.json(), { message: 'body.configJson.webhookPath: is already in use' });
    }
    const second = await create(other, otherAgent, { type: 'webhook' });
    for (const method of ['PUT', 'PATCH'] as const) {
      const clash = await api(app, other).request(method, `/api/triggers/${second.id}`, { configJson: { webhookPath: 'shared-path' } });
      assert.equal(clash.statusCode, 409, clash.body);
    }
    assert.equal((await api(app, other).get(`/api/triggers/${second.id}`)).json().configJson.webhookPath, second.configJson.webhookPath, 'unchanged');

    assert.equal((await api(app, user).delete(`/api/triggers/${first.id}`)).statusCode, 204);
    const reused = await api(app, other).patch(`/api/triggers/${second.id}`, { configJson: { webhookPath: 'shared-path' } });
    assert.equal(reused.statusCode, 200, reused.body);
    assert.equal(reused.json().hookUrl, 'http://localhost:3000/api/hooks/triggers/shared-path');

    // Removing the path with a merge patch generates a new one, and frees the old.
    const regenerated = (await api(app, other).patch(`/api/triggers/${second.id}`, { configJson: { webhookPath: null } })).json();
    assert.match(regenerated.configJson.webhookPath, /^[0-9a-f]{24}$/);
    assert.equal(regenerated.configJson.secretToken, maskSecret(second.configJson.secretToken), 'the token is kept (and masked)');
    await create(user, agent, { type: 'webhook', configJson: { webhookPath: 'shared-path' } });
  });

  it('masks secretToken after the response that set it; a masked value sent back keeps it', async () => {
    const token = 'first-token-AAAA-1111-zz';
    const created = await create(user, agent, { type: 'webhook', configJson: { secretToken: token } });
    assert.equal(created.configJson.secretToken, token, 'full in the creating response');
    const masked = maskSecret(token);
    assert.equal(masked, '••••1-zz');
    assert.equal((await api(app, user).get(`/api/triggers/${created.id}`)).json().configJson.secretToken, masked);
    const listed = (await api(app, user).get(`/api/agents/${agent}/triggers?limit=200`)).json().find((t: { id: string }) => t.id === created.id);
    assert.equal(listed.configJson.secretToken, masked);

    // Sending the masked value back (as a client echoing a GET does) changes nothing.
    for (const method of ['PUT', 'PATCH'] as const) {
      const echoed = await api(app, user).request(method, `/api/triggers/${created.id}`, { name: 'renamed', configJson: { secretToken: masked } });
      assert.equal(echoed.statusCode, 200, echoed.body);
      assert.equal(echoed.json().configJson.secretToken, masked, 'not revealed by an unchanged secret');
    }
    const renamed = await api(app, user).patch(`/api/triggers/${created.id}`, { name: 'again' });
    assert.equal(renamed.json().configJson.secretToken, masked);
    assert.equal(testSecretBox.open(String((await storedConfig(created.id)).secretToken)), token, 'stored sealed, unchanged');

    const wrongMask = await api(app, user).patch(`/api/triggers/${created.id}`, { configJson: { secretToken: '••••nope' } });
    assert.equal(wrongMask.statusCode, 400);
    assert.match(wrongMask.json().message, /^body\.configJson\.secretToken: a masked value/);

    // A new token is shown once, in the response that set it.
    const rotated = 'second-token-BBBB-2222-yy';
    const changed = (await api(app, user).patch(`/api/triggers/${created.id}`, { configJson: { secretToken: rotated } })).json();
    assert.equal(changed.configJson.secretToken, rotated);
    assert.equal((await api(app, user).get(`/api/triggers/${created.id}`)).json().configJson.secretToken, maskSecret(rotated));
    assert.equal(testSecretBox.open(String((await storedConfig(created.id)).secretToken)), rotated);

    // Removing it (null) generates a new one, shown once.
    const regenerated = (await api(app, user).patch(`/api/triggers/${created.id}`, { configJson: { secretToken: null } })).json();
    const generated = regenerated.configJson.secretToken as string;
    assert.match(generated, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(testSecretBox.open(String((await storedConfig(created.id)).secretToken)), generated);
    assert.equal((await api(app, user).get(`/api/triggers/${created.id}`)).json().configJson.secretToken, maskSecret(generated));

    const { rows } = await db.query<{ config_json: string }>('SELECT config_json::text FROM triggers');
    const dump = rows.map((r) => r.config_json).join('\n');
    assert.ok(dump.includes(created.configJson.webhookPath), 'the dump holds the trigger');
    for (const secret of [token, rotated, generated, created.configJson.secretToken]) {
      assert.ok(!dump.includes(secret), 'no plaintext token in config_json');
    }
  });

  it('updates partially with PUT and PATCH; configJson is a merge patch', async () => {
    const t = await create(user, agent, {
      type: 'cron', name: 'Nightly', configJson: { cronExpression: '0 2 * * *', timezone: 'Europe/Berlin', overlapPolicy: 'buffer_one' },
    });
    const put = await api(app, user).put(`/api/triggers/${t.id}`, { configJson: { cronExpression: '30 3 * * *' } });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(put.json().configJson, { cronExpression: '30 3 * * *', timezone: 'Europe/Berlin', overlapPolicy: 'buffer_one', catchupWindow: '1h' });
    assert.equal(put.json().name, 'Nightly');
    assert.equal(put.json().enabled, true);
    assert.equal(wallClock(put.json().nextFireAt, 'Europe/Berlin'), '03:30:00');
    assert.ok(Date.parse(put.json().updatedAt) >= Date.parse(t.updatedAt));

    const patch = await api(app, user).patch(`/api/triggers/${t.id}`, { name: 'Renamed' });
    assert.equal(patch.json().name, 'Renamed');
    assert.equal(patch.json().configJson.cronExpression, '30 3 * * *');

    // null removes a key; its default comes back.
    const reset = await api(app, user).patch(`/api/triggers/${t.id}`, { configJson: { timezone: null, overlapPolicy: null, catchupWindow: '2h' } });
    assert.deepEqual(reset.json().configJson, { cronExpression: '30 3 * * *', timezone: 'UTC', overlapPolicy: 'skip', catchupWindow: '2h' });

    const required = await api(app, user).patch(`/api/triggers/${t.id}`, { configJson: { cronExpression: null } });
    assert.equal(required.statusCode, 400);
    assert.equal(required.json().message, 'body.configJson.cronExpression: is required');
    const badZone = await api(app, user).put(`/api/triggers/${t.id}`, { name: 'not applied', configJson: { timezone: 'Mars/Base' } });
    assert.equal(badZone.statusCode, 400);
    assert.equal(badZone.json().message, 'body.configJson.timezone: unknown IANA time zone "Mars/Base"');
    const badName = await api(app, user).patch(`/api/triggers/${t.id}`, { name: '' });
    assert.equal(badName.statusCode, 400);
    assert.match(badName.json().message, /^body\.name:/);
    const agentIdRefused = await api(app, user).patch(`/api/triggers/${t.id}`, { agentId: null });
    assert.equal(agentIdRefused.statusCode, 400);
    assert.match(agentIdRefused.json().message, /agentId/);
    const unchanged = (await api(app, user).get(`/api/triggers/${t.id}`)).json();
    assert.equal(unchanged.name, 'Renamed');
    assert.deepEqual(unchanged.configJson, reset.json().configJson);
    assert.equal(unchanged.agentId, agent);

    // The eventFilter merges key by key too.
    const ev = await create(user, agent, { type: 'event', configJson: { eventType: 'agent.created', eventFilter: { a: 1, b: 'x' } } });
    const merged = (await api(app, user).patch(`/api/triggers/${ev.id}`, { configJson: { eventFilter: { b: null, c: { $contains: 'y' } } } })).json();
    assert.deepEqual(merged.configJson, { eventType: 'agent.created', eventFilter: { a: 1, c: { $contains: 'y' } } });
  });

  it('replaces the config when type changes, and requires it', async () => {
    const t = await create(user, agent, { type: 'cron', configJson: { cronExpression: '0 9 * * *' } });
    const missing = await api(app, user).patch(`/api/triggers/${t.id}`, { type: 'webhook' });
    assert.equal(missing.statusCode, 400);
    assert.match(missing.json().message, /^body\.configJson: is required when type changes/);
    const invalid = await api(app, user).patch(`/api/triggers/${t.id}`, { type: 'event', configJson: { cronExpression: '0 9 * * *' } });
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.json().message, /^body\.configJson/);

    const hook = await api(app, user).put(`/api/triggers/${t.id}`, { type: 'webhook', configJson: { secretToken: null } });
    assert.equal(hook.statusCode, 200, hook.body);
    assert.equal(hook.json().type, 'webhook');
    assert.deepEqual(Object.keys(hook.json().configJson).sort(), ['secretToken', 'webhookPath']);
    assert.match(hook.json().configJson.secretToken, /^[A-Za-z0-9_-]{43}$/, 'the generated token is shown once');
    assert.equal(hook.json().nextFireAt, null);
    assert.ok(hook.json().hookUrl.endsWith(hook.json().configJson.webhookPath));

    const mixed = await api(app, user).patch(`/api/triggers/${t.id}`, { type: 'cron', configJson: { cronExpression: '@hourly', secretToken: hook.json().configJson.secretToken } });
    assert.equal(mixed.statusCode, 400, 'the old type\'s keys are not merged in');
    const back = await api(app, user).patch(`/api/triggers/${t.id}`, { type: 'agent_output', configJson: {} });
    assert.deepEqual(back.json().configJson, { eventType: 'agent.completed', eventFilter: {} });
    assert.equal(back.json().hookUrl, null);
    assert.equal((await db.query('SELECT webhook_path FROM triggers WHERE id = $1', [t.id])).rows[0].webhook_path, null, 'the path is freed');
    const unknownNull = await api(app, user).patch(`/api/triggers/${t.id}`, { configJson: { cronExpression: null } });
    assert.equal(unknownNull.statusCode, 400, 'a null for a field the type does not have is refused, not dropped');
    assert.equal(unknownNull.json().message, 'body.configJson: Unrecognized key: "cronExpression"');
    // The new type's config is a merge patch onto nothing: a null is an absent field (schemathesis sent these).
    const toSchedule = (await api(app, user).patch(`/api/triggers/${t.id}`, { type: 'schedule', configJson: { cronExpression: '@every 10s', catchupWindow: null } })).json();
    assert.deepEqual(toSchedule.configJson, { cronExpression: '@every 10s', timezone: 'UTC', overlapPolicy: 'skip', catchupWindow: '1h' });
    assert.equal(Date.parse(toSchedule.nextFireAt) % 10_000, 0);
  });

  it('deletes with 204, then 404', async () => {
    const t = await create(user, agent, { type: 'agent_finished' });
    const del = await api(app, user).delete(`/api/triggers/${t.id}`);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    for (const method of ['GET', 'DELETE'] as const) assert.equal((await api(app, user).request(method, `/api/triggers/${t.id}`)).statusCode, 404);
    assert.equal((await api(app, user).patch(`/api/triggers/${t.id}`, { name: 'x' })).statusCode, 404);
  });

  it('goes with its agent', async () => {
    const doomed = await newAgent(user);
    const t = await create(user, doomed, { type: 'webhook', configJson: { webhookPath: 'doomed-agent-hook' } });
    assert.equal((await api(app, user).delete(`/api/agents/${doomed}`)).statusCode, 204);
    assert.equal((await api(app, user).get(`/api/triggers/${t.id}`)).statusCode, 404);
    assert.equal((await api(app, user).get(`/api/agents/${doomed}/triggers`)).statusCode, 404);
    assert.equal((await db.query('SELECT 1 FROM triggers WHERE id = $1', [t.id])).rowCount, 0);
    await create(user, agent, { type: 'webhook', configJson: { webhookPath: 'doomed-agent-hook' } }); // the path is free again
  });

  it('pages newest first with a Link header, without gaps or repeats', async () => {
    const own = await newAgent(user);
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await create(user, own, { type: 'agent_finished', name: `p${i}` })).id);
    const { ids, pages } = await readAllPages(app, user, `/api/agents/${own}/triggers?limit=3`);
    assert.equal(pages, 3);
    assert.deepEqual(ids, [...created].reverse());
    assert.equal((await api(app, user).get(`/api/agents/${own}/triggers?limit=0`)).statusCode, 400);
  });

  it('shows another account nothing: 404 on every route, nothing in lists', async () => {
    const stranger = await registerUser(app);
    const strangerAgent = await newAgent(stranger);
    const t = await create(user, agent, { type: 'webhook' });
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await api(app, stranger).request(method, `/api/triggers/${t.id}`, method === 'PUT' || method === 'PATCH' ? { name: 'stolen' } : undefined);
      assert.equal(res.statusCode, 404, `${method}: ${res.body}`);
      assert.deepEqual(res.json(), { message: 'Trigger not found' });
    }
    for (const method of ['GET', 'POST'] as const) {
      const res = await api(app, stranger).request(method, `/api/agents/${agent}/triggers`, method === 'POST' ? { type: 'agent_finished', name: 'x' } : undefined);
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { message: 'Agent not found' });
    }
    assert.deepEqual((await api(app, stranger).get(`/api/agents/${strangerAgent}/triggers`)).json(), []);
    assert.deepEqual((await api(app, stranger).get('/api/user-triggers')).json(), []);
    const read = (await api(app, user).get(`/api/triggers/${t.id}`)).json();
    assert.equal(read.name, 'T');

    // Unknown and malformed ids are absent too.
    assert.equal((await api(app, user).get('/api/triggers/00000000-0000-4000-8000-000000000000')).statusCode, 404);
    assert.equal((await api(app, user).get('/api/triggers/not-a-uuid')).statusCode, 404);
    assert.equal((await api(app, user).get('/api/agents/not-a-uuid/triggers')).statusCode, 404);
    const unknownAgent = await api(app, user).post('/api/agents/00000000-0000-4000-8000-000000000000/triggers', { type: 'agent_finished', name: 'x' });
    assert.deepEqual([unknownAgent.statusCode, unknownAgent.json()], [404, { message: 'Agent not found' }]);
    assert.equal((await api(app).get(`/api/triggers/${t.id}`)).statusCode, 401);
  });
});
