import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createDeliveryActivities } from '../../activities/deliveries';
import { readAllPages, registerUser, type TestUser } from '../helpers/app';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';

/** Outgoing webhook deliveries (README § Webhooks; docs/api.md § Signatures) on a real dev server, to real receivers on loopback. */

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A loopback receiver; `answer(n)` (1-based request number) gives the status and how long to hold the response. */
async function startReceiver(answer: (n: number) => { status: number; holdMs?: number }) {
  const requests: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
      const { status, holdMs = 0 } = answer(requests.length);
      setTimeout(() => res.writeHead(status, { 'content-type': 'text/plain' }).end('ok'), holdMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;

function harnessCalls(get: () => EngineHarness) {
  async function call(user: TestUser, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) {
    const res = await get().app.inject({ method, url, headers: user.auth, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.body ? res.json() : undefined };
  }
  async function createWebhook(user: TestUser, fields: object) {
    const res = await call(user, 'POST', '/api/webhooks', { name: 'receiver', ...fields });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; accountId: string };
  }
  async function deliveries(user: TestUser, webhookId: string) {
    const res = await call(user, 'GET', `/api/webhooks/${webhookId}/deliveries`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Delivery[];
  }
  /** Waits until the webhook's only delivery satisfies `done`. */
  async function waitForDelivery(user: TestUser, webhookId: string, what: string, done: (d: Delivery) => boolean, timeoutMs = 20_000) {
    return waitFor(what, async () => {
      const list = await deliveries(user, webhookId);
      return list.length === 1 && done(list[0]!) && list[0]!;
    }, timeoutMs);
  }
  return { call, createWebhook, deliveries, waitForDelivery };
}

interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

describe('outgoing webhook deliveries', () => {
  let h: EngineHarness;
  const receivers: Receiver[] = [];
  const receiver = async (answer: (n: number) => { status: number; holdMs?: number }) => {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  };
  const { call, createWebhook, deliveries, waitForDelivery } = harnessCalls(() => h);

  before(async () => {
    h = await startEngine(__filename, { WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s', WEBHOOK_TIMEOUT_MS: '2000' });
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await h.close();
  });

  it('a receiver failing twice gets the third attempt, signed with the same webhook-id each time', async () => {
    const user = await registerUser(h.app);
    const rx = await receiver((n) => ({ status: n <= 2 ? 500 : 200 }));
    const secret = whsec();
    const webhook = await createWebhook(user, { url: rx.url, secret, events: ['agent.created'] });

    const agent = await call(user, 'POST', '/api/agents', { name: 'emits agent.created' });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));

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
    assert.equal(envelope.data.agentId, agent.body.id);
    assert.ok(!Number.isNaN(Date.parse(envelope.timestamp)));

    // Counted once per event, not per attempt.
    const after = await call(user, 'GET', `/api/webhooks/${webhook.id}`);
    assert.equal(after.body.triggerCount, 1);
    assert.ok(after.body.lastTriggered);

    const detail = await call(user, 'GET', `/api/webhooks/${webhook.id}/deliveries/${delivery.id}`);
    assert.equal(detail.status, 200);
    assert.deepEqual(
      detail.body.attemptsDetail.map((a: { attempt: number; generation: number; statusCode: number; error: string | null }) => [a.generation, a.attempt, a.statusCode, a.error]),
      [[0, 1, 500, 'HTTP 500'], [0, 2, 500, 'HTTP 500'], [0, 3, 200, null]],
    );
  });

  it('a raw (non-whsec) secret signs with its bytes; /test delivers webhook.test to that webhook only', async () => {
    const user = await registerUser(h.app);
    const rx = await receiver(() => ({ status: 204 }));
    const other = await receiver(() => ({ status: 204 }));
    const secret = 'plain-shared-secret-42';
    const webhook = await createWebhook(user, { url: rx.url, secret, events: ['agent.created'] });
    const sibling = await createWebhook(user, { url: other.url, events: ['*'] });

    const test = await call(user, 'POST', `/api/webhooks/${webhook.id}/test`, { payload: { hello: ['world', 1] } });
    assert.equal(test.status, 202, JSON.stringify(test.body));
    const delivery = await waitForDelivery(user, webhook.id, 'the test delivery', (d) => d.status === 'succeeded');
    assert.equal(delivery.eventId, test.body.eventId);
    assert.equal(delivery.eventType, 'webhook.test');
    assert.equal(delivery.lastStatusCode, 204);
    assert.equal(rx.requests.length, 1);
    const body = new Webhook(secret, { format: 'raw' }).verify(rx.requests[0]!.body, rx.requests[0]!.headers) as { type: string; data: object };
    assert.equal(body.type, 'webhook.test');
    assert.deepEqual(Object.keys(body.data).sort(), ['message', 'payload', 'webhookId']);
    assert.deepEqual(body.data, { ...body.data, webhookId: webhook.id, payload: { hello: ['world', 1] } });
    const bad = await call(user, 'POST', `/api/webhooks/${webhook.id}/test`, { extra: 1 });
    assert.equal(bad.status, 400);
    // Another key does not verify it (the signature really depends on the secret).
    assert.throws(() => new Webhook(`${secret}x`, { format: 'raw' }).verify(rx.requests[0]!.body, rx.requests[0]!.headers), /signature/);

    // Not to the sibling subscribed to everything (and the list pages with Link rel=next).
    await call(user, 'POST', `/api/webhooks/${webhook.id}/test`);
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
    const rx = await receiver((n) => ({ status: 500, holdMs: n === 4 ? 1000 : 0 }));
    const webhook = await createWebhook(user, { url: rx.url, secret: whsec() });
    await call(user, 'POST', `/api/webhooks/${webhook.id}/test`);

    const failed = await waitForDelivery(user, webhook.id, 'the delivery to fail', (d) => d.status === 'failed');
    assert.equal(failed.attempts, 3);
    assert.equal(failed.lastStatusCode, 500);
    assert.equal(failed.lastError, 'HTTP 500');
    assert.equal(failed.nextAttemptAt, null);
    assert.equal(rx.requests.length, 3);

    const retried = await call(user, 'POST', `/api/webhooks/${webhook.id}/deliveries/${failed.id}/retry`);
    assert.equal(retried.status, 202, JSON.stringify(retried.body));
    assert.equal(retried.body.id, failed.id);
    assert.equal(retried.body.status, 'pending');
    assert.equal(retried.body.attempts, 3);

    const again = await call(user, 'POST', `/api/webhooks/${webhook.id}/deliveries/${failed.id}/retry`);
    assert.equal(again.status, 409);
    assert.match(again.body.message, /pending/);

    const final = await waitForDelivery(user, webhook.id, 'the retry to fail', (d) => d.status === 'failed' && d.attempts === 4);
    assert.equal(final.lastStatusCode, 500);
    await sleep(1500); // a retry is one attempt, not a new schedule
    assert.equal(rx.requests.length, 4);
    assert.deepEqual(new Set(rx.requests.map((r) => r.headers['webhook-id'])), new Set([failed.eventId]));
    const detail = await call(user, 'GET', `/api/webhooks/${webhook.id}/deliveries/${failed.id}`);
    assert.deepEqual(detail.body.attemptsDetail.map((a: { generation: number; attempt: number }) => [a.generation, a.attempt]), [[0, 1], [0, 2], [0, 3], [1, 1]]);
  });

  it('disabling the webhook cancels its pending delivery; nothing more is sent, even once re-enabled', async () => {
    const user = await registerUser(h.app);
    // The first attempt is held, so the webhook is disabled while its delivery is surely pending.
    const rx = await receiver(() => ({ status: 500, holdMs: 1000 }));
    const webhook = await createWebhook(user, { url: rx.url });
    await call(user, 'POST', `/api/webhooks/${webhook.id}/test`);
    await waitFor('the first attempt to arrive', async () => rx.requests.length === 1);

    const disabled = await call(user, 'PATCH', `/api/webhooks/${webhook.id}`, { enabled: false });
    assert.equal(disabled.status, 200);
    const [cancelled] = await deliveries(user, webhook.id);
    assert.equal(cancelled!.status, 'cancelled');
    assert.equal(cancelled!.nextAttemptAt, null);

    const retry = await call(user, 'POST', `/api/webhooks/${webhook.id}/deliveries/${cancelled!.id}/retry`);
    assert.equal(retry.status, 409, 'no retry on a disabled webhook');
    const test = await call(user, 'POST', `/api/webhooks/${webhook.id}/test`);
    assert.equal(test.status, 409);

    // The schedule's later attempts (at +1 s and +2 s) would fall in this window.
    await sleep(2500);
    assert.equal((await call(user, 'PATCH', `/api/webhooks/${webhook.id}`, { enabled: true })).status, 200);
    await sleep(1500);
    assert.equal(rx.requests.length, 1);
    const [still] = await deliveries(user, webhook.id);
    assert.equal(still!.status, 'cancelled');
    assert.equal(still!.attempts, 1, 'the attempt in flight when it was cancelled still counts');
  });

  it('a receiver slower than WEBHOOK_TIMEOUT_MS is a failed attempt with a timeout error', async () => {
    const user = await registerUser(h.app);
    const rx = await receiver((n) => ({ status: 200, holdMs: n === 1 ? 3500 : 0 }));
    const webhook = await createWebhook(user, { url: rx.url });
    await call(user, 'POST', `/api/webhooks/${webhook.id}/test`);
    const delivery = await waitForDelivery(user, webhook.id, 'the second attempt to succeed', (d) => d.status === 'succeeded');
    assert.equal(delivery.attempts, 2);
    const detail = await call(user, 'GET', `/api/webhooks/${webhook.id}/deliveries/${delivery.id}`);
    const [first, second] = detail.body.attemptsDetail;
    assert.equal(first.statusCode, null);
    assert.match(first.error, /timed out after 2000 ms/);
    assert.ok(first.durationMs >= 1900 && first.durationMs < 3500, `duration ${first.durationMs}`);
    assert.equal(second.statusCode, 200);
  });

  it('an attempt Temporal runs again (its worker died after recording it) is counted once', async () => {
    const user = await registerUser(h.app);
    const rx = await receiver(() => ({ status: 500 }));
    const webhook = await createWebhook(user, { url: rx.url, secret: whsec() });
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
    const rx = await receiver(() => ({ status: 200 }));
    const webhook = await createWebhook(owner, { url: rx.url });
    await call(owner, 'POST', `/api/webhooks/${webhook.id}/test`);
    const delivery = await waitForDelivery(owner, webhook.id, 'the test delivery', (d) => d.status === 'succeeded');

    const routes: ['GET' | 'POST', string][] = [
      ['GET', `/api/webhooks/${webhook.id}/deliveries`],
      ['GET', `/api/webhooks/${webhook.id}/deliveries/${delivery.id}`],
      ['POST', `/api/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`],
      ['POST', `/api/webhooks/${webhook.id}/test`],
    ];
    for (const [method, url] of routes) {
      const res = await call(stranger, method, url);
      assert.equal(res.status, 404, `${method} ${url}`);
      assert.deepEqual(Object.keys(res.body), ['message']);
    }
    // Unknown and malformed ids, and a delivery asked for under another webhook of the same account.
    const second = await createWebhook(owner, { url: rx.url, events: ['agent.deleted'] });
    for (const url of [
      `/api/webhooks/${second.id}/deliveries/${delivery.id}`,
      `/api/webhooks/${webhook.id}/deliveries/00000000-0000-4000-8000-000000000000`,
      `/api/webhooks/${webhook.id}/deliveries/not-a-uuid`,
      '/api/webhooks/not-a-uuid/deliveries',
    ]) {
      assert.equal((await call(owner, 'GET', url)).status, 404, url);
    }
    assert.equal((await call(owner, 'POST', `/api/webhooks/${second.id}/deliveries/${delivery.id}/retry`)).status, 404);
    assert.equal(await h.app.inject({ method: 'GET', url: `/api/webhooks/${webhook.id}/deliveries` }).then((r) => r.statusCode), 401);

    const incoming = await createWebhook(owner, { direction: 'incoming' });
    const refused = await call(owner, 'POST', `/api/webhooks/${incoming.id}/test`);
    assert.equal(refused.status, 409);
    assert.match(refused.body.message, /incoming/);
  });
});

describe('deliveries re-check the target at send time (ALLOW_PRIVATE_TARGETS=false)', () => {
  let h: EngineHarness;
  let rx: Receiver;
  const { call, waitForDelivery } = harnessCalls(() => h);

  before(async () => {
    h = await startEngine(__filename, { WEBHOOK_RETRY_SCHEDULE: '0s', ALLOW_PRIVATE_TARGETS: 'false' });
    rx = await startReceiver(() => ({ status: 200 }));
  });
  after(async () => {
    await rx.close();
    await h.close();
  });

  it('a stored loopback target gets no request; the attempt fails with the reason', async () => {
    const user = await registerUser(h.app);
    // As if stored while private targets were allowed, or before its name re-resolved to loopback.
    const { rows } = await h.db.query<{ id: string }>(
      `INSERT INTO webhooks (account_id, name, direction, url, events)
       SELECT id, 'loopback', 'outgoing', $2, ARRAY['*'] FROM accounts WHERE owner_user_id = $1 RETURNING id`,
      [user.id, rx.url],
    );
    const webhookId = rows[0]!.id;
    assert.equal((await call(user, 'POST', `/api/webhooks/${webhookId}/test`)).status, 202);
    const delivery = await waitForDelivery(user, webhookId, 'the delivery to fail', (d) => d.status === 'failed');
    assert.equal(delivery.attempts, 1);
    assert.equal(delivery.lastStatusCode, null);
    assert.match(delivery.lastError!, /^target not allowed: .*loopback/);
    assert.equal(rx.requests.length, 0);
  });
});
