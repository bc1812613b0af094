import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createDeliveryActivities } from '../../activities/deliveries';
import { api } from '../helpers/api';
import { readAllPages, registerUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { webhookCalls } from '../helpers/webhook-calls';

/** Outgoing webhook deliveries (docs/api.md § Webhooks; docs/api.md § Signatures) on a real dev server, to real receivers on loopback. */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;

describe('outgoing webhook deliveries', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  const { createWebhook, deliveries, waitForDelivery } = webhookCalls(() => h);

  before(async () => {
    h = await startEngine(suite, __filename, { WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s', WEBHOOK_TIMEOUT_MS: '2000' });
  });

  it('a receiver failing twice gets the third attempt, signed with the same webhook-id each time', async () => {
    const user = await registerUser(h.app);
    const rx = await startReceiver(suite, (_, i) => ({ status: i < 2 ? 500 : 200 }));
    const secret = whsec();
    const webhook = await createWebhook(user, { url: `${rx.url}/hook`, secret, events: ['agent.created'] });

    const agent = await api(h.app, user).post('/api/agents', { name: 'emits agent.created' });
    assert.equal(agent.statusCode, 201, agent.body);

    const delivery = await waitForDelivery(user, webhook.id, 'the delivery to succeed', (d) => d.status === 'succeeded');
    assert.equal(delivery.attempts, 3);
    assert.equal(delivery.lastStatusCode, 200);
    assert.equal(delivery.lastError, null);
    assert.equal(delivery.nextAttemptAt, null);
    assert.equal(delivery.eventType, 'agent.created');
    assert.equal(rx.requests.length, 3);

    const verifier = new Webhook(secret);
    for (const req of rx.requests) {
      assert.equal(req.headers['webhook-id'], delivery.eventId, 'webhook-id is the event id on every attempt');
      assert.equal(req.headers['content-type'], 'application/json');
      assert.match(req.headers['webhook-timestamp']!, /^\d{10}$/);
      assert.ok(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
      verifier.verify(req.body, req.headers); // throws on a bad signature
    }
    assert.equal(new Set(rx.requests.map((r) => r.body)).size, 1, 'the same bytes on every attempt');
    const envelope = JSON.parse(rx.requests[0]!.body);
    assert.deepEqual(Object.keys(envelope).sort(), ['accountId', 'data', 'id', 'timestamp', 'type']);
    assert.equal(envelope.id, delivery.eventId);
    assert.equal(envelope.type, 'agent.created');
    assert.equal(envelope.accountId, webhook.accountId);
    assert.equal(envelope.data.agentId, agent.json().id);
    assert.ok(!Number.isNaN(Date.parse(envelope.timestamp)));

    // Counted once per event, not per attempt.
    const after = await api(h.app, user).get(`/api/webhooks/${webhook.id}`);
    assert.equal(after.json().triggerCount, 1);
    assert.ok(after.json().lastTriggered);

    const detail = await api(h.app, user).get(`/api/webhooks/${webhook.id}/deliveries/${delivery.id}`);
    assert.equal(detail.statusCode, 200);
    assert.deepEqual(
      detail.json().attemptsDetail.map((a: { attempt: number; generation: number; statusCode: number; error: string | null }) => [a.generation, a.attempt, a.statusCode, a.error]),
      [[0, 1, 500, 'HTTP 500'], [0, 2, 500, 'HTTP 500'], [0, 3, 200, null]],
    );
  });

  it('a raw (non-whsec) secret signs with its bytes; /test delivers webhook.test to that webhook only', async () => {
    const user = await registerUser(h.app);
    const rx = await startReceiver(suite, () => ({ status: 204 }));
    const other = await startReceiver(suite, () => ({ status: 204 }));
    const secret = 'plain-shared-secret-42';
    const webhook = await createWebhook(user, { url: `${rx.url}/hook`, secret, events: ['agent.created'] });
    const sibling = await createWebhook(user, { url: `${other.url}/hook`, events: ['*'] });

    const test = await api(h.app, user).post(`/api/webhooks/${webhook.id}/test`, { payload: { hello: ['world', 1] } });
    assert.equal(test.statusCode, 202, test.body);
    const delivery = await waitForDelivery(user, webhook.id, 'the test delivery', (d) => d.status === 'succeeded');
    assert.equal(delivery.eventId, test.json().eventId);
    assert.equal(delivery.eventType, 'webhook.test');
    assert.equal(delivery.lastStatusCode, 204);
    assert.equal(rx.requests.length, 1);
    const body = new Webhook(secret, { format: 'raw' }).verify(rx.requests[0]!.body, rx.requests[0]!.headers) as { type: string; data: object };
    assert.equal(body.type, 'webhook.test');
    assert.deepEqual(Object.keys(body.data).sort(), ['message', 'payload', 'webhookId']);
    assert.deepEqual(body.data, { ...body.data, webhookId: webhook.id, payload: { hello: ['world', 1] } });
    const bad = await api(h.app, user).post(`/api/webhooks/${webhook.id}/test`, { extra: 1 });
    assert.equal(bad.statusCode, 400);
    // Another key does not verify it (the signature really depends on the secret).
    assert.throws(() => new Webhook(`${secret}x`, { format: 'raw' }).verify(rx.requests[0]!.body, rx.requests[0]!.headers), /signature/);

    // Not to the sibling subscribed to everything (and the list pages with Link rel=next).
    await api(h.app, user).post(`/api/webhooks/${webhook.id}/test`);
    await waitFor('the second test delivery', async () => (await deliveries(user, webhook.id)).every((d) => d.status === 'succeeded') && rx.requests.length === 2);
    const pages = await readAllPages(h.app, user, `/api/webhooks/${webhook.id}/deliveries?limit=1`);
    assert.equal(pages.pages, 2);
    assert.equal(pages.ids[1], delivery.id, 'newest first');
    assert.deepEqual(await deliveries(user, sibling.id), []);
    assert.equal(other.requests.length, 0);
  });

  it('an always-failing receiver: failed after the schedule; a manual retry makes one more attempt with the same webhook-id', async () => {
    const user = await registerUser(h.app);
    // The retried request is held a moment, so the delivery is surely still pending when retried again.
    const rx = await startReceiver(suite, (_, i) => ({ status: 500, delayMs: i === 3 ? 1000 : 0 }));
    const webhook = await createWebhook(user, { url: `${rx.url}/hook`, secret: whsec() });
    await api(h.app, user).post(`/api/webhooks/${webhook.id}/test`);

    const failed = await waitForDelivery(user, webhook.id, 'the delivery to fail', (d) => d.status === 'failed');
    assert.equal(failed.attempts, 3);
    assert.equal(failed.lastStatusCode, 500);
    assert.equal(failed.lastError, 'HTTP 500');
    assert.equal(failed.nextAttemptAt, null);
    assert.equal(rx.requests.length, 3);

    const retried = await api(h.app, user).post(`/api/webhooks/${webhook.id}/deliveries/${failed.id}/retry`);
    assert.equal(retried.statusCode, 202, retried.body);
    assert.equal(retried.json().id, failed.id);
    assert.equal(retried.json().status, 'pending');
    assert.equal(retried.json().attempts, 3);

    // Retried again while that attempt is still out (pending): taken too, one more generation at once.
    await waitFor('the retried request', async () => rx.requests.length === 4);
    const again = await api(h.app, user).post(`/api/webhooks/${webhook.id}/deliveries/${failed.id}/retry`);
    assert.equal(again.statusCode, 202, again.body);
    assert.equal(again.json().status, 'pending');

    const final = await waitForDelivery(user, webhook.id, 'the retries to fail', (d) => d.status === 'failed' && d.attempts === 5);
    assert.equal(final.lastStatusCode, 500);
    await sleep(1500); // a retry is one attempt, not a new schedule
    assert.equal(rx.requests.length, 5);
    assert.deepEqual(new Set(rx.requests.map((r) => r.headers['webhook-id'])), new Set([failed.eventId]));
    const detail = await api(h.app, user).get(`/api/webhooks/${webhook.id}/deliveries/${failed.id}`);
    assert.deepEqual(
      detail.json().attemptsDetail.map((a: { generation: number; attempt: number }) => [a.generation, a.attempt]),
      [[0, 1], [0, 2], [0, 3], [1, 1], [2, 1]],
    );
  });

  it('disabling the webhook cancels its pending delivery; nothing more is sent, even once re-enabled', async () => {
    const user = await registerUser(h.app);
    // The first attempt is held, so the webhook is disabled while its delivery is surely pending.
    const rx = await startReceiver(suite, () => ({ status: 500, delayMs: 1000 }));
    const webhook = await createWebhook(user, { url: `${rx.url}/hook` });
    await api(h.app, user).post(`/api/webhooks/${webhook.id}/test`);
    await waitFor('the first attempt to arrive', async () => rx.requests.length === 1);

    const disabled = await api(h.app, user).patch(`/api/webhooks/${webhook.id}`, { enabled: false });
    assert.equal(disabled.statusCode, 200);
    const [cancelled] = await deliveries(user, webhook.id);
    assert.equal(cancelled!.status, 'cancelled');
    assert.equal(cancelled!.nextAttemptAt, null);

    const retry = await api(h.app, user).post(`/api/webhooks/${webhook.id}/deliveries/${cancelled!.id}/retry`);
    assert.equal(retry.statusCode, 409, 'no retry on a disabled webhook');
    const test = await api(h.app, user).post(`/api/webhooks/${webhook.id}/test`);
    assert.equal(test.statusCode, 409);

    // The schedule's later attempts (at +1 s and +2 s) would fall in this window.
    await sleep(2500);
    assert.equal((await api(h.app, user).patch(`/api/webhooks/${webhook.id}`, { enabled: true })).statusCode, 200);
    await sleep(1500);
    assert.equal(rx.requests.length, 1);
    const [still] = await deliveries(user, webhook.id);
    assert.equal(still!.status, 'cancelled');
    assert.equal(still!.attempts, 1, 'the attempt in flight when it was cancelled still counts');
  });

  it('a receiver slower than WEBHOOK_TIMEOUT_MS is a failed attempt with a timeout error', async () => {
    const user = await registerUser(h.app);
    const rx = await startReceiver(suite, (_, i) => ({ status: 200, delayMs: i === 0 ? 3500 : 0 }));
    const webhook = await createWebhook(user, { url: `${rx.url}/hook` });
    await api(h.app, user).post(`/api/webhooks/${webhook.id}/test`);
    const delivery = await waitForDelivery(user, webhook.id, 'the second attempt to succeed', (d) => d.status === 'succeeded');
    assert.equal(delivery.attempts, 2);
    const detail = await api(h.app, user).get(`/api/webhooks/${webhook.id}/deliveries/${delivery.id}`);
    const [first, second] = detail.json().attemptsDetail;
    assert.equal(first.statusCode, null);
    assert.match(first.error, /timed out after 2000 ms/);
    assert.ok(first.durationMs >= 1900 && first.durationMs < 3500, `duration ${first.durationMs}`);
    assert.equal(second.statusCode, 200);
  });

  it('an attempt Temporal runs again (its worker died after recording it) is counted once', async () => {
    const user = await registerUser(h.app);
    const rx = await startReceiver(suite, () => ({ status: 500 }));
    const webhook = await createWebhook(user, { url: `${rx.url}/hook`, secret: whsec() });
    // A delivery with no workflow: this test plays the workflow's part.
    const { rows } = await h.db.query<{ id: string; event_id: string }>(
      `WITH e AS (INSERT INTO events (account_id, type, data) VALUES ($1, 'webhook.test', '{}') RETURNING id, account_id)
       INSERT INTO deliveries (account_id, webhook_id, event_id) SELECT account_id, $2, id FROM e RETURNING id, event_id`,
      [webhook.accountId, webhook.id],
    );
    const { id: deliveryId, event_id: eventId } = rows[0]!;
    const { attemptDelivery } = createDeliveryActivities(h.activityDeps());
    const first = { deliveryId, generation: 0, attempt: 1, nextDelayMs: 60_000, timeoutMs: 2000 };
    assert.equal(await attemptDelivery(first), 'retry');
    assert.equal(await attemptDelivery(first), 'retry'); // sent again (receivers de-duplicate on webhook-id), stored once
    const last = { ...first, attempt: 2, nextDelayMs: null };
    assert.equal(await attemptDelivery(last), 'failed');
    assert.equal(await attemptDelivery(last), 'failed', 'a recorded last attempt answers its result without sending again');
    assert.equal(await attemptDelivery({ ...last, generation: 1, attempt: 1 }), 'stopped', 'a generation that is not current does nothing');

    assert.equal(rx.requests.length, 3);
    assert.deepEqual(new Set(rx.requests.map((r) => r.headers['webhook-id'])), new Set([eventId]));
    const [delivery] = await deliveries(user, webhook.id);
    assert.equal(delivery!.status, 'failed');
    assert.equal(delivery!.attempts, 2);
    const stored = await h.db.query(`SELECT generation, attempt FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`, [deliveryId]);
    assert.deepEqual(stored.rows, [{ generation: 0, attempt: 1 }, { generation: 0, attempt: 2 }]);
  });

  it('refuses incoming webhooks and hides other accounts (404 on every delivery route)', async () => {
    const owner = await registerUser(h.app);
    const stranger = await registerUser(h.app);
    const rx = await startReceiver(suite, () => ({ status: 200 }));
    const webhook = await createWebhook(owner, { url: `${rx.url}/hook` });
    await api(h.app, owner).post(`/api/webhooks/${webhook.id}/test`);
    const delivery = await waitForDelivery(owner, webhook.id, 'the test delivery', (d) => d.status === 'succeeded');

    const routes: ['GET' | 'POST', string][] = [
      ['GET', `/api/webhooks/${webhook.id}/deliveries`],
      ['GET', `/api/webhooks/${webhook.id}/deliveries/${delivery.id}`],
      ['POST', `/api/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`],
      ['POST', `/api/webhooks/${webhook.id}/test`],
    ];
    for (const [method, url] of routes) {
      const res = await api(h.app, stranger).request(method, url);
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.deepEqual(Object.keys(res.json()), ['message']);
    }
    // Unknown and malformed ids, and a delivery asked for under another webhook of the same account.
    const second = await createWebhook(owner, { url: `${rx.url}/hook`, events: ['agent.deleted'] });
    for (const url of [
      `/api/webhooks/${second.id}/deliveries/${delivery.id}`,
      `/api/webhooks/${webhook.id}/deliveries/00000000-0000-4000-8000-000000000000`,
      `/api/webhooks/${webhook.id}/deliveries/not-a-uuid`,
      '/api/webhooks/not-a-uuid/deliveries',
    ]) {
      assert.equal((await api(h.app, owner).get(url)).statusCode, 404, url);
    }
    assert.equal((await api(h.app, owner).post(`/api/webhooks/${second.id}/deliveries/${delivery.id}/retry`)).statusCode, 404);
    assert.equal((await api(h.app).get(`/api/webhooks/${webhook.id}/deliveries`)).statusCode, 401);

    const incoming = await createWebhook(owner, { direction: 'incoming' });
    const refused = await api(h.app, owner).post(`/api/webhooks/${incoming.id}/test`);
    assert.equal(refused.statusCode, 409);
    assert.match(refused.json().message, /incoming/);
  });
});

describe('deliveries re-check the target at send time (ALLOW_PRIVATE_TARGETS=false)', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let rx: Receiver;
  const { waitForDelivery } = webhookCalls(() => h);

  before(async () => {
    h = await startEngine(suite, __filename, { WEBHOOK_RETRY_SCHEDULE: '0s', ALLOW_PRIVATE_TARGETS: 'false' });
    rx = await startReceiver(suite, () => ({ status: 200 }));
  });

  it('a stored loopback target gets no request; the attempt fails with the reason', async () => {
    const user = await registerUser(h.app);
    // As if stored while private targets were allowed, or before its name re-resolved to loopback.
    const { rows } = await h.db.query<{ id: string }>(
      `INSERT INTO webhooks (account_id, name, direction, url, events)
       SELECT id, 'loopback', 'outgoing', $2, ARRAY['*'] FROM accounts WHERE owner_user_id = $1 RETURNING id`,
      [user.id, `${rx.url}/hook`],
    );
    const webhookId = rows[0]!.id;
    assert.equal((await api(h.app, user).post(`/api/webhooks/${webhookId}/test`)).statusCode, 202);
    const delivery = await waitForDelivery(user, webhookId, 'the delivery to fail', (d) => d.status === 'failed');
    assert.equal(delivery.attempts, 1);
    assert.equal(delivery.lastStatusCode, null);
    assert.match(delivery.lastError!, /^target not allowed: .*loopback/);
    assert.equal(rx.requests.length, 0);
  });
});
