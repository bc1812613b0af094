import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { api } from '../helpers/api';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;

/** Public hook endpoints (docs/api.md § Signatures), over real HTTP. */
describe('public hooks', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let base: string;
  let user: TestUser;

  before(async () => {
    h = await startEngine(suite, __filename);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    user = await registerUser(h.app);
  });

  const signed = (secret: Webhook, body: string, at = new Date(), msgId = `msg_${randomUUID()}`) => ({
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secret.sign(msgId, at, body),
  });
  const incoming = (body: Record<string, unknown> = {}) => api(h.app, user).ok('POST', '/api/webhooks', { name: 'in', direction: 'incoming', ...body });
  const eventsOf = async (webhookId: string) =>
    (await h.db.query(`SELECT id, type, data FROM events WHERE data->>'webhookId' = $1 ORDER BY created_at`, [webhookId])).rows;

  describe('incoming webhooks', () => {
    it('counts an unsigned call and emits webhook.received, which fires a matching event trigger', async () => {
      const webhook = await incoming();
      assert.deepEqual(webhook.events, ['webhook.received']);
      const trigger = await api(h.app, user).ok('POST', '/api/user-triggers', {
        name: 'on hook',
        type: 'event',
        configJson: { eventType: 'webhook.received', eventFilter: { webhookId: webhook.id } },
      });

      const res = await api(base).post(`/api/hooks/webhooks/${webhook.id}`, '{"order": {"id": 7}}');
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(Object.keys(res.json()).sort(), ['eventIds', 'id']);
      assert.deepEqual(res.json().eventIds, [res.json().id]);

      const after = await api(h.app, user).ok('GET', `/api/webhooks/${webhook.id}`);
      assert.equal(after.triggerCount, 1);
      assert.ok(after.lastTriggered);
      const events = await eventsOf(webhook.id);
      assert.deepEqual(events, [{ id: res.json().id, type: 'webhook.received', data: { webhookId: webhook.id, payload: { order: { id: 7 } } } }]);

      // Dispatched durably: the event trigger fires with the event's data as its payload.
      const fire = await waitFor('the event trigger to fire', async () => {
        const { rows } = await h.db.query(`SELECT source, status, event_id, payload FROM fires WHERE trigger_id = $1`, [trigger.id]);
        return rows[0];
      }, 30_000);
      assert.deepEqual(fire, { source: 'event', status: 'fired', event_id: res.json().id, payload: { webhookId: webhook.id, payload: { order: { id: 7 } } } });
      assert.equal((await api(h.app, user).ok('GET', `/api/user-triggers/${trigger.id}`)).fireCount, 1);
    });

    it('emits webhook.received once per call (no type the platform reserves); any JSON value is a payload', async () => {
      const webhook = await incoming({ events: ['webhook.received', 'webhook.received'] });
      const res = await api(base).post(`/api/hooks/webhooks/${webhook.id}`, '[1, "two", null]');
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(res.json().eventIds, [res.json().id]);
      const events = await eventsOf(webhook.id);
      assert.deepEqual(events.map((e) => e.type), ['webhook.received']);
      assert.deepEqual(events.map((e) => e.id), res.json().eventIds);
      for (const e of events) assert.deepEqual(e.data.payload, [1, 'two', null]);

      // No body at all: payload null.
      const empty = await api(base).post(`/api/hooks/webhooks/${webhook.id}`, undefined);
      assert.equal(empty.statusCode, 202, empty.body);
      assert.equal((await api(h.app, user).ok('GET', `/api/webhooks/${webhook.id}`)).triggerCount, 2);
    });

    it('checks the Standard Webhooks signature of a webhook with a whsec_ secret, on the bytes sent', async () => {
      const secret = whsec();
      const webhook = await incoming({ secret });
      const signer = new Webhook(secret);
      const url = `/api/hooks/webhooks/${webhook.id}`;
      // Spacing and key order a re-serialization would change: the signature covers these exact bytes.
      const body = '{ "b": 1,   "a": [ 2 ] }';

      const ok = await api(base).post(url, body, signed(signer, body));
      assert.equal(ok.statusCode, 202, ok.body);

      const refused: [string, Record<string, string>][] = [
        ['no signature headers', {}],
        ['another secret', signed(new Webhook(whsec()), body)],
        ['a tampered body', signed(signer, '{"b":1,"a":[2]}')],
        ['a timestamp 10 minutes old', signed(signer, body, new Date(Date.now() - 10 * 60_000))],
        ['a timestamp 10 minutes ahead', signed(signer, body, new Date(Date.now() + 10 * 60_000))],
        ['a signature without the v1 prefix', { ...signed(signer, body), 'webhook-signature': signed(signer, body)['webhook-signature'].slice(3) }],
      ];
      for (const [what, headers] of refused) {
        const res = await api(base).post(url, body, headers);
        assert.equal(res.statusCode, 401, `${what}: ${res.body}`);
        assert.deepEqual(Object.keys(res.json()), ['message'], what);
      }
      const after = await api(h.app, user).ok('GET', `/api/webhooks/${webhook.id}`);
      assert.equal(after.triggerCount, 1, 'refused calls are not counted');
      assert.equal((await eventsOf(webhook.id)).length, 1);
    });

    it('uses any other secret as raw bytes', async () => {
      const secret = 'plain-shared-secret-ü';
      const webhook = await incoming({ secret });
      const body = '{"n":1}';
      const res = await api(base).post(`/api/hooks/webhooks/${webhook.id}`, body, signed(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }), body));
      assert.equal(res.statusCode, 202, res.body);
      // Read as Latin-1 (what the package does with a raw string) it is another key.
      const wrong = await api(base).post(`/api/hooks/webhooks/${webhook.id}`, body, signed(new Webhook(Buffer.from(secret, 'latin1'), { format: 'raw' }), body));
      assert.equal(wrong.statusCode, 401);
    });

    it('counts and emits a signed message once, answering a repeat with the same ids', async () => {
      const secret = whsec();
      const webhook = await incoming({ secret });
      const signer = new Webhook(secret);
      const url = `/api/hooks/webhooks/${webhook.id}`;
      const body = '{"attempt":1}';
      const headers = signed(signer, body);

      const first = await api(base).post(url, body, headers);
      assert.equal(first.statusCode, 202);
      // The sender's retry: same message id, a fresh timestamp and signature; and two at once.
      const retried = await Promise.all([1, 2].map(() => api(base).post(url, body, signed(signer, body, new Date(), headers['webhook-id']))));
      for (const r of retried) {
        assert.equal(r.statusCode, 202);
        assert.deepEqual(r.json(), first.json());
      }
      const other = await api(base).post(url, body, signed(signer, body));
      assert.equal(other.statusCode, 202);
      assert.notEqual(other.json().id, first.json().id);

      assert.equal((await api(h.app, user).ok('GET', `/api/webhooks/${webhook.id}`)).triggerCount, 2);
      assert.equal((await eventsOf(webhook.id)).length, 2);
    });

    it('counts the call last, holding the webhook row shared to the commit; disabled meanwhile, nothing of the call is kept', async () => {
      const owner = await registerUser(h.app);
      const webhook = await api(h.app, owner).ok('POST', '/api/webhooks', { name: 'in', direction: 'incoming' });
      // Hold the webhook's row (as a user's update does), so that the call stops where it counts itself.
      const blocker = await h.db.connect();
      let call: Promise<{ statusCode: number; body: string }> | undefined;
      try {
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE', [webhook.id]);
        call = api(base).post(`/api/hooks/webhooks/${webhook.id}`, '{"n": 1}');
        const waiting = await waitFor('the call to wait for the webhook row', async () => {
          const { rows } = await h.db.query(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%webhook_trigger_counts%'`,
          );
          return rows[0]?.pid as number | undefined;
        }, 10_000);
        // Its event is written already: the count is the transaction's last statement (docs/adr/0012-fewer-round-trips-per-hook.md).
        const { rows: locked } = await h.db.query(
          `SELECT c.relname FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE l.pid = $1 AND l.granted AND l.mode = 'RowExclusiveLock' AND c.relkind = 'r'`,
          [waiting],
        );
        assert.ok(locked.some((l) => l.relname === 'events'), `the event is written before the count: ${JSON.stringify(locked)}`);
        await blocker.query(`UPDATE webhooks SET enabled = false WHERE id = $1`, [webhook.id]);
      } finally {
        await blocker.query('COMMIT');
        blocker.release();
      }
      const res = await call!;
      assert.equal(res.statusCode, 404, res.body);
      assert.deepEqual(await eventsOf(webhook.id), [], 'no event');
      assert.equal((await api(h.app, owner).ok('GET', `/api/webhooks/${webhook.id}`)).triggerCount, 0);
    });

    it('answers 404 for an unknown, malformed, outgoing or disabled webhook, and 400 for a bad body', async () => {
      const disabled = await incoming({ enabled: false });
      const outgoing = await api(h.app, user).ok('POST', '/api/webhooks', { name: 'out', url: 'http://127.0.0.1:9/x' });
      for (const id of [randomUUID(), 'not-a-uuid', outgoing.id, disabled.id]) {
        const res = await api(base).post(`/api/hooks/webhooks/${id}`, '{}');
        assert.equal(res.statusCode, 404, `${id}: ${res.body}`);
        assert.deepEqual(Object.keys(res.json()), ['message']);
      }
      assert.equal((await api(h.app, user).ok('GET', `/api/webhooks/${disabled.id}`)).triggerCount, 0);

      const webhook = await incoming();
      const bad: [string, string | undefined, Record<string, string>, number][] = [
        ['malformed JSON', '{"a":', {}, 400],
        ['a NUL character', '{"a":"\\u0000"}', {}, 400],
        ['a body nested too deep', `${'['.repeat(70)}${']'.repeat(70)}`, {}, 400],
        ['text/plain', 'hello', { 'content-type': 'text/plain' }, 415],
      ];
      for (const [what, body, headers, status] of bad) {
        const res = await api(base).post(`/api/hooks/webhooks/${webhook.id}`, body, headers);
        assert.equal(res.statusCode, status, `${what}: ${res.body}`);
        assert.deepEqual(Object.keys(res.json()), ['message'], what);
      }
      assert.equal((await api(base).post(`/api/hooks/webhooks/${webhook.id}`, '{"a":', {})).json().message, 'Malformed JSON in request body');
      assert.equal((await api(h.app, user).ok('GET', `/api/webhooks/${webhook.id}`)).triggerCount, 0);
    });
  });

  describe('trigger hooks', () => {
    it('fires a webhook trigger with the right X-Trigger-Token; the payload reaches the agent run', async () => {
      const agent = await api(h.app, user).ok('POST', '/api/agents', { name: 'Hooked', status: 'active' });
      const trigger = await api(h.app, user).ok('POST', `/api/agents/${agent.id}/triggers`, { name: 'hook', type: 'webhook' });
      const { webhookPath, secretToken } = trigger.configJson;
      assert.equal(trigger.hookUrl.endsWith(`/api/hooks/triggers/${webhookPath}`), true);
      const url = `/api/hooks/triggers/${webhookPath}`;

      const res = await api(base).post(url, '{"order": 42}', { 'x-trigger-token': secretToken });
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(Object.keys(res.json()), ['fireId']);
      const { fireId } = res.json();

      const fire = await waitFor('the fire row', async () => {
        const { rows } = await h.db.query(`SELECT id, trigger_id, source, status, run_id, payload FROM fires WHERE id = $1`, [fireId]);
        return rows[0];
      }, 30_000);
      assert.equal(fire.trigger_id, trigger.id);
      assert.equal(fire.source, 'webhook');
      assert.equal(fire.status, 'fired');
      assert.deepEqual(fire.payload, { order: 42 });
      const stored = await api(h.app, user).ok('GET', `/api/triggers/${trigger.id}`);
      assert.equal(stored.fireCount, 1);
      assert.ok(stored.lastFired);
      const { rows: runs } = await h.db.query(`SELECT id, agent_id, trigger_id, input FROM runs WHERE fire_id = $1`, [fireId]);
      assert.equal(runs.length, 1);
      assert.equal(runs[0].id, fire.run_id);
      assert.equal(runs[0].agent_id, agent.id);
      assert.deepEqual(runs[0].input, { source: 'webhook', triggerId: trigger.id, fireId, payload: { order: 42 } });

      // No body: payload null.
      const bare = await api(base).post(url, undefined, { 'x-trigger-token': secretToken });
      assert.equal(bare.statusCode, 202, bare.body);
      const bareFire = await waitFor('the second fire', async () => (await h.db.query(`SELECT payload FROM fires WHERE id = $1`, [bare.json().fireId])).rows[0]);
      assert.equal(bareFire.payload, null);
    });

    it('refuses a missing or wrong token (401) and an unknown, malformed or disabled path (404), firing nothing', async () => {
      const token = 'right-token-0123456789';
      const trigger = await api(h.app, user).ok('POST', '/api/user-triggers', { name: 'hook', type: 'webhook', configJson: { secretToken: token } });
      const shown = (await api(h.app, user).ok('GET', `/api/user-triggers/${trigger.id}`)).configJson.secretToken as string;
      const url = `/api/hooks/triggers/${trigger.configJson.webhookPath}`;
      const refused: [Record<string, string>, string][] = [
        [{}, 'missing'],
        [{ 'x-trigger-token': 'wrong-token-0123456789' }, 'same length, wrong'],
        [{ 'x-trigger-token': token.slice(0, -1) }, 'a prefix'],
        [{ 'x-trigger-token': `${token}x` }, 'longer'],
        [{ 'x-trigger-token': '' }, 'empty'],
        [{ 'x-trigger-token': shown.slice(-4) }, 'the last 4 characters a read shows'],
      ];
      for (const [headers, what] of refused) {
        const res = await api(base).post(url, '{}', headers);
        assert.equal(res.statusCode, 401, `${what}: ${res.body}`);
        assert.deepEqual(Object.keys(res.json()), ['message']);
      }
      const good = { 'x-trigger-token': token };
      for (const path of ['no-such-path', 'NOT_A_PATH!', trigger.id]) {
        const res = await api(base).post(`/api/hooks/triggers/${encodeURIComponent(path)}`, '{}', good);
        assert.equal(res.statusCode, 404, `${path}: ${res.body}`);
        assert.deepEqual(Object.keys(res.json()), ['message']);
      }

      // The refused calls queued nothing: after a good one has fired, it is the only fire.
      const ok = await api(base).post(url, '{}', good);
      assert.equal(ok.statusCode, 202, ok.body);
      await waitFor('the good fire', async () => (await h.db.query(`SELECT 1 FROM fires WHERE id = $1`, [ok.json().fireId])).rows[0], 30_000);
      const { rows } = await h.db.query(`SELECT id FROM fires WHERE trigger_id = $1`, [trigger.id]);
      assert.deepEqual(rows.map((r) => r.id), [ok.json().fireId]);
      assert.equal((await api(h.app, user).ok('GET', `/api/user-triggers/${trigger.id}`)).fireCount, 1);

      await api(h.app, user).ok('PATCH', `/api/user-triggers/${trigger.id}`, { enabled: false });
      const disabled = await api(base).post(url, '{}', good);
      assert.equal(disabled.statusCode, 404, disabled.body);
      assert.deepEqual(Object.keys(disabled.json()), ['message']);
    });
  });
});
