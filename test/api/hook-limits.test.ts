import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { waitFor } from '../helpers/processes';

/** docs/api.md § Rate limits and § Events on the public hook endpoints: a rate limit per hook, and no forged platform events. */
describe('public hooks: limits', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let user: TestUser;
  const LIMIT = 3;

  before(async () => {
    ({ app, db } = await startTestApp(suite, { HOOK_RATE_LIMIT: String(LIMIT) }));
    user = await registerUser(app);
    // The first hand-off to Temporal loads its client, which holds the event loop for about a second:
    // get that done here, so the windows measured below are not stretched by it.
    const warm = await incoming();
    assert.equal((await hook(`/api/hooks/webhooks/${warm.id}`)).statusCode, 202);
    await waitFor('the first hand-off', async () => (await db.query('SELECT 1 FROM outbox')).rowCount === 0, 10_000);
  });

  const hook = (url: string, headers: Record<string, string> = {}) =>
    api(app).post(url, '{"n": 1}', headers);
  const incoming = async () => api(app, user).ok('POST', '/api/webhooks', { name: 'in', direction: 'incoming' });
  const counters = async (like: string) =>
    (await db.query<{ key: string }>(`SELECT key FROM auth_rate_limits WHERE key LIKE $1`, [like])).rows.map((r) => r.key);

  it('accepts HOOK_RATE_LIMIT requests per second per incoming webhook, then answers 429 with Retry-After', async () => {
    const webhook = await incoming();
    const url = `/api/hooks/webhooks/${webhook.id}`;
    const codes: number[] = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await hook(url);
      codes.push(res.statusCode);
      if (res.statusCode === 429) {
        assert.deepEqual(Object.keys(res.json()), ['message']);
        assert.match(res.json().message, /^Too many requests to this hook \(at most 3 per second\)/);
        assert.equal(res.headers['retry-after'], '1');
      }
    }
    assert.deepEqual(codes, [202, 202, 202, 429, 429]);
    // A full window is not written again: a flood past the limit costs reads, not row-locked writes.
    const counter = await db.query(`SELECT hits FROM auth_rate_limits WHERE key = $1`, [`hook:webhook:${webhook.id}`]);
    assert.deepEqual(counter.rows, [{ hits: LIMIT }]);
    // Counters need no durability (a crash costs one extra window): no WAL, no disk sync per hit.
    assert.equal((await db.query(`SELECT relpersistence FROM pg_class WHERE relname = 'auth_rate_limits'`)).rows[0].relpersistence, 'u');
    assert.equal((await api(app, user).ok('GET', `/api/webhooks/${webhook.id}`)).triggerCount, LIMIT, 'refused requests are not counted');

    // Another webhook has its own budget; this one takes requests again in the next window.
    const other = await incoming();
    assert.equal((await hook(`/api/hooks/webhooks/${other.id}`)).statusCode, 202);
    await waitFor('the next window', async () => (await hook(url)).statusCode === 202, 3000);
  });

  it('is exact under concurrent requests', async () => {
    const webhook = await incoming();
    const answers = await Promise.all(Array.from({ length: 8 }, () => hook(`/api/hooks/webhooks/${webhook.id}`)));
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [202, 202, 202, 429, 429, 429, 429, 429]);
  });

  it('limits a webhook trigger the same way, counting requests with a wrong token too', async () => {
    const trigger = await api(app, user).ok('POST', '/api/user-triggers', { type: 'webhook', name: 'h', configJson: { secretToken: 'trigger-token-0123456789' } });
    const url = `/api/hooks/triggers/${trigger.configJson.webhookPath}`;
    assert.equal((await hook(url, { 'x-trigger-token': 'wrong-token-0123456789' })).statusCode, 401);
    assert.equal((await hook(url)).statusCode, 401);
    assert.equal((await hook(url, { 'x-trigger-token': 'trigger-token-0123456789' })).statusCode, 202);
    const refused = await hook(url, { 'x-trigger-token': 'trigger-token-0123456789' });
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '1');
  });

  it('answers 404 for a hook that does not exist, without keeping a counter for it', async () => {
    const id = randomUUID();
    for (let i = 0; i < LIMIT + 2; i++) {
      assert.equal((await hook(`/api/hooks/webhooks/${id}`)).statusCode, 404);
      assert.equal((await hook('/api/hooks/triggers/no-such-path')).statusCode, 404);
    }
    // A disabled hook is as good as absent.
    const webhook = await incoming();
    await api(app, user).ok('POST', '/api/webhooks', { name: 'unused', url: 'https://93.184.215.14/x' });
    await api(app, user).patch(`/api/webhooks/${webhook.id}`, { enabled: false });
    assert.equal((await hook(`/api/hooks/webhooks/${webhook.id}`)).statusCode, 404);
    assert.deepEqual(await counters(`%${id}%`), []);
    assert.deepEqual(await counters(`%${webhook.id}%`), []);
    assert.deepEqual(await counters('%no-such-path%'), []);
  });

  it('never emits a type the platform reserves, even from a row that holds one', async () => {
    // As an API instance from before the rule could have written them.
    const mixed = await incoming();
    const forged = await incoming();
    await db.query(`UPDATE webhooks SET events = '{webhook.received,agent.completed,trigger.fired}' WHERE id = $1`, [mixed.id]);
    await db.query(`UPDATE webhooks SET events = '{agent.completed}' WHERE id = $1`, [forged.id]);
    for (const webhook of [mixed, forged]) {
      const res = await hook(`/api/hooks/webhooks/${webhook.id}`);
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(res.json().eventIds.length, 1);
      const { rows } = await db.query(`SELECT type FROM events WHERE data->>'webhookId' = $1`, [webhook.id]);
      assert.deepEqual(rows, [{ type: 'webhook.received' }]);
    }

    // The migration rewrites such rows to what they emit; outgoing webhooks keep their subscriptions.
    const outgoing = await api(app, user).ok('POST', '/api/webhooks', { name: 'out', url: 'https://93.184.215.14/x', events: ['agent.completed'] });
    await db.query(readFileSync(path.join(__dirname, '../../db/migrations/5_api_limits.sql'), 'utf8'));
    for (const webhook of [mixed, forged]) assert.deepEqual((await api(app, user).ok('GET', `/api/webhooks/${webhook.id}`)).events, ['webhook.received']);
    assert.deepEqual((await api(app, user).ok('GET', `/api/webhooks/${outgoing.id}`)).events, ['agent.completed']);
  });

  it('documents the 429 of both hook routes', async () => {
    const paths = (await api(app).get('/api/openapi.json')).json().paths;
    for (const route of ['/api/hooks/webhooks/{id}', '/api/hooks/triggers/{webhookPath}']) assert.ok(paths[route].post.responses['429'], route);
  });
});
