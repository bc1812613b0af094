import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';

/**
 * Recovering a webhook's failed deliveries (POST /api/webhooks/:id/recover, docs/api.md § Webhooks) and retrying a
 * pending delivery, on a real dev server, to real receivers on loopback.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Delivery {
  id: string;
  eventId: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  createdAt: string;
}

interface Recovery {
  id: string;
  webhookId: string;
  since: string;
  until: string;
  status: string;
  total: number;
  attempted: number;
  succeeded: number;
  failed: number;
  createdAt: string;
  completedAt: string | null;
}

async function createWebhook(h: EngineHarness, user: TestUser, url: string) {
  // With a secret, so that every attempt carries the Standard Webhooks headers (webhook-id: the event id).
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const res = await api(h.app, user).post('/api/webhooks', { name: 'receiver', url, secret, events: ['agent.created'] });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; accountId: string };
}

async function deliveries(h: EngineHarness, user: TestUser, webhookId: string): Promise<Delivery[]> {
  const out: Delivery[] = [];
  for (let url: string | null = `/api/webhooks/${webhookId}/deliveries?limit=100`; url; ) {
    const res = await api(h.app, user).get(url);
    assert.equal(res.statusCode, 200, res.body);
    out.push(...(res.json() as Delivery[]));
    const next = /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''));
    url = next ? new URL(next[1]!).pathname + new URL(next[1]!).search : null;
  }
  return out;
}

/** `n` test events to the webhook, each one delivery; waits until all of the webhook's `expected` deliveries failed. */
async function failedDeliveries(h: EngineHarness, user: TestUser, webhookId: string, n: number, expected: number): Promise<Delivery[]> {
  const eventIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await api(h.app, user).post(`/api/webhooks/${webhookId}/test`);
    assert.equal(res.statusCode, 202, res.body);
    eventIds.push(res.json().eventId);
  }
  const all = await waitFor(`${expected} failed deliveries`, async () => {
    const list = await deliveries(h, user, webhookId);
    return list.length === expected && list.every((d) => d.status === 'failed') && list;
  }, 30_000);
  return all.filter((d) => eventIds.includes(d.eventId));
}

describe('recovering a webhook\'s failed deliveries', () => {
  const suite = suiteContext();
  let h: EngineHarness;

  before(async () => {
    // One attempt each (they fail at once while the receiver is down); batches of 2, so 50 deliveries take 25
    // batches and the workflow continues as new once (every 20 batches).
    h = await startEngine(suite, __filename, { WEBHOOK_RETRY_SCHEDULE: '0s', WEBHOOK_TIMEOUT_MS: '2000', RECOVERY_BATCH_SIZE: '2' });
  });

  it('retries the 50 failed deliveries of the window once each, with the same webhook-id, in one workflow recovery:<id>', async () => {
    const user = await registerUser(h.app);
    let up = false;
    const rx = await startReceiver(suite, () => ({ status: up ? 200 : 503 }));
    const webhook = await createWebhook(h, user, `${rx.url}/hook`);

    const before = await failedDeliveries(h, user, webhook.id, 3, 3);
    await sleep(50);
    const since = new Date().toISOString();
    const inside = await failedDeliveries(h, user, webhook.id, 50, 53);
    await sleep(50);
    const until = new Date().toISOString();
    await sleep(50);
    const after = await failedDeliveries(h, user, webhook.id, 2, 55);
    assert.equal(rx.requests.length, 55);

    up = true;
    const res = await api(h.app, user).post(`/api/webhooks/${webhook.id}/recover`, { since, until });
    assert.equal(res.statusCode, 202, res.body);
    const created = res.json() as Recovery;
    assert.deepEqual(
      { ...created, id: undefined, createdAt: undefined },
      { id: undefined, createdAt: undefined, webhookId: webhook.id, since, until, status: 'running', total: 50, attempted: 0, succeeded: 0, failed: 0, completedAt: null },
    );

    const done = await waitFor('the recovery to complete and its attempts to end', async () => {
      const r = (await api(h.app, user).get(`/api/webhooks/${webhook.id}/recoveries/${created.id}`)).json() as Recovery;
      return r.status === 'completed' && r.succeeded + r.failed === r.attempted && r;
    }, 60_000);
    assert.equal(done.succeeded, 50);
    assert.equal(done.total, 50);
    assert.equal(done.attempted, 50);
    assert.equal(done.failed, 0);
    assert.ok(done.completedAt);

    // Each delivery of the window was received once more, with its own webhook-id; none outside the window.
    await sleep(500);
    const again = rx.requests.slice(55).map((r) => r.headers['webhook-id']);
    assert.equal(again.length, 50);
    for (const r of rx.requests.slice(55)) assert.equal(JSON.parse(r.body).id, r.headers['webhook-id'], 'the same event');
    assert.deepEqual(new Set(again), new Set(inside.map((d) => d.eventId)));
    const now = await deliveries(h, user, webhook.id);
    const status = new Map(now.map((d) => [d.id, d]));
    for (const d of inside) assert.deepEqual([status.get(d.id)!.status, status.get(d.id)!.attempts], ['succeeded', 2]);
    for (const d of [...before, ...after]) assert.deepEqual([status.get(d.id)!.status, status.get(d.id)!.attempts], ['failed', 1], 'outside the window');

    // One workflow, found by the account's search attribute like any other, continued as new once.
    const runs = await waitFor('the recovery workflow in Temporal', async () => {
      const found = [];
      for await (const wf of h.engine.client.workflow.list({ query: `AccountId = '${webhook.accountId}' AND WorkflowId = 'recovery:${created.id}'` })) found.push(wf);
      return found.length >= 2 && found.every((wf) => wf.status.name !== 'RUNNING') && found;
    }, 20_000);
    assert.deepEqual(runs.map((wf) => wf.status.name).sort(), ['COMPLETED', 'CONTINUED_AS_NEW']);
    const handle = h.engine.client.workflow.getHandle(`recovery:${created.id}`);
    assert.equal(await handle.result(), 'completed');
    assert.equal((await handle.describe()).priority?.fairnessKey, webhook.accountId, 'its account is its fairness key');
  });

  it('a delivery a recovery re-sent less than RECOVER_INTERVAL ago is not re-sent by the next recovery', async () => {
    const user = await registerUser(h.app);
    const rx = await startReceiver(suite, () => ({ status: 503 }));
    const webhook = await createWebhook(h, user, `${rx.url}/hook`);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const recoverAndWait = async (expectedTotal: number) => {
      const res = await api(h.app, user).post(`/api/webhooks/${webhook.id}/recover`, { since });
      assert.equal(res.statusCode, 202, res.body);
      const created = res.json() as Recovery;
      assert.equal(created.total, expectedTotal, 'total: the failed deliveries it will send again');
      return waitFor('the recovery to complete and its attempts to end', async () => {
        const r = (await api(h.app, user).get(`/api/webhooks/${webhook.id}/recoveries/${created.id}`)).json() as Recovery;
        return r.status === 'completed' && r.succeeded + r.failed === r.attempted && r;
      }, 60_000);
    };
    // Ask for the next recovery as if the last one had been asked for over an interval ago (a long recovery
    // re-sends its last batches long after it was asked for): only the interval of each delivery stands.
    const askedLongAgo = () => h.db.query(`UPDATE delivery_recoveries SET created_at = created_at - interval '61 seconds' WHERE webhook_id = $1`, [webhook.id]);

    const resent = await failedDeliveries(h, user, webhook.id, 4, 4);
    const first = await recoverAndWait(4);
    assert.deepEqual([first.attempted, first.failed], [4, 4]);
    const fresh = await failedDeliveries(h, user, webhook.id, 2, 6);
    const sent = rx.requests.length;

    await askedLongAgo();
    const second = await recoverAndWait(2);
    assert.equal(second.attempted, 2);
    await sleep(300);
    assert.deepEqual(
      new Set(rx.requests.slice(sent).map((r) => r.headers['webhook-id'])),
      new Set(fresh.map((d) => d.eventId)),
      'only the deliveries no recovery had re-sent within the interval',
    );

    // Their re-sends over an interval ago too: the next recovery sends the four again (the two it sent just now stay out).
    await askedLongAgo();
    await h.db.query(
      `UPDATE delivery_recovery_items SET recovered_at = recovered_at - interval '61 seconds' WHERE delivery_id = ANY($1::uuid[])`,
      [resent.map((d) => d.id)],
    );
    const third = await recoverAndWait(4);
    assert.equal(third.attempted, 4);
  });

  it('answers 400 for a bad window, 409 for a disabled webhook, 404 to another account; Idempotency-Key replays', async () => {
    const owner = await registerUser(h.app);
    const stranger = await registerUser(h.app);
    const rx = await startReceiver(suite, () => ({ status: 200 }));
    const webhook = await createWebhook(h, owner, `${rx.url}/hook`);
    const url = `/api/webhooks/${webhook.id}/recover`;
    const day = 86_400_000;
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();

    const bad: [object, RegExp][] = [
      [{}, /body\.since: is required/],
      [{ since: 'yesterday' }, /body\.since/],
      [{ since: at(-day), until: 'soon' }, /body\.until/],
      [{ since: at(-day), extra: 1 }, /extra/],
      [{ since: at(-day), until: at(-2 * day) }, /body\.since: must be before until/],
      [{ since: at(day) }, /body\.since: must be before now/],
      [{ since: at(-31 * day) }, /body\.since: must be at most 30 days before now/],
      [{ since: at(-40 * day), until: at(-9 * day) }, /body\.since: must be at most 30 days before until/],
    ];
    for (const [body, message] of bad) {
      const res = await api(h.app, owner).post(url, body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assert.deepEqual(Object.keys(res.json()), ['message']);
      assert.match(res.json().message, message);
    }

    // Idempotency-Key: the same request again answers the first recovery, and starts no second one.
    const body = { since: at(-day) };
    const key = { 'idempotency-key': 'recover-once' };
    const first = await api(h.app, owner).post(url, body, key);
    assert.equal(first.statusCode, 202, first.body);
    const recovery = first.json() as Recovery;
    assert.equal(recovery.total, 0);
    const replay = await api(h.app, owner).post(url, body, key);
    assert.equal(replay.statusCode, 202);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().id, recovery.id);
    const rows = await h.db.query('SELECT count(*)::int AS n FROM delivery_recoveries WHERE webhook_id = $1', [webhook.id]);
    assert.equal(rows.rows[0].n, 1);

    // Nothing failed in the window: completed at once, by its one batch.
    const done = await waitFor('the empty recovery to complete', async () => {
      const r = (await api(h.app, owner).get(`/api/webhooks/${webhook.id}/recoveries/${recovery.id}`)).json() as Recovery;
      return r.status === 'completed' && r;
    }, 20_000);
    assert.deepEqual([done.total, done.attempted, done.succeeded, done.failed], [0, 0, 0, 0]);

    for (const [method, path] of [
      ['POST', url],
      ['GET', `/api/webhooks/${webhook.id}/recoveries/${recovery.id}`],
    ] as const) {
      const res = await api(h.app, stranger).request(method, path, method === 'POST' ? { since: at(-day) } : undefined);
      assert.equal(res.statusCode, 404, `${method} ${path}`);
      assert.deepEqual(Object.keys(res.json()), ['message']);
    }
    const other = await createWebhook(h, owner, `${rx.url}/other`);
    assert.equal((await api(h.app, owner).get(`/api/webhooks/${other.id}/recoveries/${recovery.id}`)).statusCode, 404, 'under another webhook');
    assert.equal((await api(h.app, owner).get(`/api/webhooks/${webhook.id}/recoveries/00000000-0000-4000-8000-000000000000`)).statusCode, 404);

    assert.equal((await api(h.app, owner).patch(`/api/webhooks/${webhook.id}`, { enabled: false })).statusCode, 200);
    const refused = await api(h.app, owner).post(url, { since: at(-day) });
    assert.equal(refused.statusCode, 409);
    assert.match(refused.json().message, /disabled/);
  });

  it('one recovery of a webhook at a time: 409 while one is running, with nothing written; accepted again once it completed', async () => {
    const owner = await registerUser(h.app);
    const rx = await startReceiver(suite, () => ({ status: 200 }));
    const webhook = await createWebhook(h, owner, `${rx.url}/hook`);
    const other = await createWebhook(h, owner, `${rx.url}/other`);
    const since = new Date(Date.now() - 86_400_000).toISOString();
    const count = async () => (await h.db.query('SELECT count(*)::int AS n FROM delivery_recoveries WHERE account_id = $1', [webhook.accountId])).rows[0].n;

    await h.stopWorker(); // the first stays running
    try {
      const first = await api(h.app, owner).post(`/api/webhooks/${webhook.id}/recover`, { since });
      assert.equal(first.statusCode, 202, first.body);
      const { id } = first.json() as Recovery;
      const second = await api(h.app, owner).post(`/api/webhooks/${webhook.id}/recover`, { since }, { 'idempotency-key': 'recover-later' });
      assert.equal(second.statusCode, 409, second.body);
      assert.equal(second.headers['retry-after'], '10');
      assert.deepEqual(Object.keys(second.json()), ['message']);
      assert.match(second.json().message, new RegExp(`still running \\(${id}\\): follow it with GET /api/webhooks/${webhook.id}/recoveries/${id}`));
      assert.equal(await count(), 1, 'the refused request wrote nothing');
      assert.equal((await api(h.app, owner).post(`/api/webhooks/${other.id}/recover`, { since })).statusCode, 202, 'another webhook is not held up');
      // One still `running` a day after it was asked for lost its workflow: it no longer holds the webhook.
      await h.db.query(`UPDATE delivery_recoveries SET created_at = now() - interval '25 hours' WHERE id = $1`, [id]);
      assert.equal((await api(h.app, owner).post(`/api/webhooks/${webhook.id}/recover`, { since })).statusCode, 202, 'a day-old running recovery does not count');
      // …and reads as what it is: failed (retention can delete it), not running for ever.
      const stale = await api(h.app, owner).ok('GET', `/api/webhooks/${webhook.id}/recoveries/${id}`);
      assert.equal(stale.status, 'failed');
      assert.notEqual(stale.completedAt, null);
    } finally {
      await h.startWorker();
    }
    await waitFor('the recoveries to complete', async () => {
      const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM delivery_recoveries WHERE account_id = $1 AND status = 'running'`, [webhook.accountId]);
      return rows[0].n === 0;
    }, 30_000);
    // The 409 said when to ask again, so it was not kept for its Idempotency-Key: the same key asks again
    // (once RECOVER_INTERVAL has passed since the last recovery of the webhook was asked for).
    await h.db.query(`UPDATE delivery_recoveries SET created_at = created_at - interval '61 seconds' WHERE webhook_id = $1`, [webhook.id]);
    const later = await api(h.app, owner).post(`/api/webhooks/${webhook.id}/recover`, { since }, { 'idempotency-key': 'recover-later' });
    assert.equal(later.statusCode, 202, later.body);
    assert.equal(later.headers['idempotent-replayed'], undefined);
    assert.equal(await count(), 4);
  });
});

describe('retrying a pending delivery', () => {
  const suite = suiteContext();
  let h: EngineHarness;

  before(async () => {
    h = await startEngine(suite, __filename, { WEBHOOK_RETRY_SCHEDULE: '0s,3s,3s', WEBHOOK_TIMEOUT_MS: '6000' });
  });

  it('attempts it at once in a new generation; the old generation makes no further attempt', async () => {
    const user = await registerUser(h.app);
    // The retried request is held past the old generation's next attempt: the delivery is still pending
    // (in the new generation) when the old one's timer fires.
    const rx = await startReceiver(suite, (_, i) => (i === 0 ? { status: 500 } : { status: 200, delayMs: 4000 }));
    const webhook = await createWebhook(h, user, `${rx.url}/hook`);
    await api(h.app, user).post(`/api/webhooks/${webhook.id}/test`);
    const pending = await waitFor('the first attempt to fail', async () => {
      const [d] = await deliveries(h, user, webhook.id);
      return d?.status === 'pending' && d.attempts === 1 && d;
    }, 20_000);
    const oldDue = Date.parse(pending.nextAttemptAt!);

    const retried = await api(h.app, user).post(`/api/webhooks/${webhook.id}/deliveries/${pending.id}/retry`);
    assert.equal(retried.statusCode, 202, retried.body);
    assert.equal(retried.json().status, 'pending');
    await waitFor('the retried request', async () => rx.requests.length === 2, 10_000);
    assert.ok(rx.requests[1]!.receivedAt < oldDue, 'received before the old generation\'s next attempt was due');

    const done = await waitFor('the retry to succeed', async () => {
      const [d] = await deliveries(h, user, webhook.id);
      return d?.status === 'succeeded' && d;
    }, 20_000);
    // Past the old generation's last scheduled attempt (+3 s, +6 s): nothing more was sent.
    await sleep(Math.max(0, oldDue + 3000 + 1000 - Date.now()));
    assert.equal(rx.requests.length, 2);
    assert.equal(new Set(rx.requests.map((r) => r.headers['webhook-id'])).size, 1);
    assert.equal(done.attempts, 2);
    const detail = await api(h.app, user).get(`/api/webhooks/${webhook.id}/deliveries/${pending.id}`);
    assert.deepEqual(detail.json().attemptsDetail.map((a: { generation: number; attempt: number }) => [a.generation, a.attempt]), [[0, 1], [1, 1]]);
  });
});
