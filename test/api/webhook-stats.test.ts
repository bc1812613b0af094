import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

interface Stats {
  webhookId: string;
  pendingDeliveries: number;
  last24h: Window;
  last7d: Window;
  lastSuccess: Attempt | null;
  lastFailure: Attempt | null;
}
interface Window {
  deliveries: { succeeded: number; failed: number; pending: number; cancelled: number };
  attempts: { succeeded: number; failed: number };
  attemptLatencyMs: { p50: number | null; p99: number | null };
}
interface Attempt {
  at: string;
  deliveryId: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** GET /api/webhooks/:id/stats (docs/api.md § Webhooks) over deliveries and attempts written at known times. */
describe('an endpoint\'s health', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let user: TestUser;

  async function call(url: string, who: TestUser = user) {
    const res = await app.inject({ method: 'GET', url, headers: who.auth });
    return { status: res.statusCode, body: res.json() };
  }
  async function createWebhook(fields: object = {}) {
    const res = await app.inject({
      method: 'POST', url: '/api/webhooks', headers: user.auth,
      payload: { name: 'endpoint', direction: 'outgoing', url: 'http://127.0.0.1:9/hook', events: ['*'], ...fields },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ id: string; accountId: string }>();
  }
  /** A delivery created `hoursAgo`, with attempts [status code or null, ms, hours ago]. */
  async function delivery(webhook: { id: string; accountId: string }, status: string, hoursAgo: number, attempts: [number | null, number, number][]) {
    const event = await db.query<{ id: string }>(`INSERT INTO events (account_id, type, data) VALUES ($1, 'agent.created', '{}') RETURNING id`, [webhook.accountId]);
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO deliveries (account_id, webhook_id, event_id, status, created_at) VALUES ($1, $2, $3, $4, now() - $5 * interval '1 hour') RETURNING id`,
      [webhook.accountId, webhook.id, event.rows[0]!.id, status, hoursAgo],
    );
    let n = 0;
    for (const [code, ms, ago] of attempts) {
      await db.query(
        `INSERT INTO delivery_attempts (delivery_id, generation, attempt, status_code, error, duration_ms, created_at)
         VALUES ($1, 0, $2, $3, $4, $5, now() - $6 * interval '1 hour')`,
        [rows[0]!.id, ++n, code, code !== null && code < 300 ? null : code === null ? 'connect ECONNREFUSED' : `HTTP ${code}`, ms, ago],
      );
    }
    return rows[0]!.id;
  }

  before(async () => {
    ({ app, db } = await startTestApp(suite));
    user = await registerUser(app);
  });

  it('counts deliveries and attempts of the last 24 h and 7 days, their latency, and the last success and failure', async () => {
    const webhook = await createWebhook();
    const other = await createWebhook(); // its rows must not count
    await delivery(other, 'succeeded', 1, [[200, 5, 1]]);
    // Within 24 h: a success after a 503, a failure (every attempt failed), a pending one, a cancelled one.
    const recovered = await delivery(webhook, 'succeeded', 3, [[503, 400, 3], [200, 100, 2]]);
    const failing = await delivery(webhook, 'failed', 5, [[null, 15_000, 5], [500, 300, 4.5], [500, 200, 1]]);
    await delivery(webhook, 'pending', 0.5, [[429, 50, 0.5]]);
    await delivery(webhook, 'cancelled', 6, []);
    // Within 7 days only.
    await delivery(webhook, 'succeeded', 72, [[204, 80, 72]]);
    await delivery(webhook, 'failed', 100, [[404, 60, 100]]);
    // Older than 7 days: not counted, and no longer the last of anything.
    await delivery(webhook, 'pending', 24 * 9, [[200, 10, 24 * 9]]);

    const res = await call(`/api/webhooks/${webhook.id}/stats`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const stats = res.body as Stats;
    assert.equal(stats.webhookId, webhook.id);
    assert.deepEqual(stats.last24h.deliveries, { succeeded: 1, failed: 1, pending: 1, cancelled: 1 });
    assert.deepEqual(stats.last24h.attempts, { succeeded: 1, failed: 5 });
    // Attempts of the last 24 h by duration: 50 100 200 300 400 15000.
    assert.deepEqual(stats.last24h.attemptLatencyMs, { p50: 200, p99: 15_000 });
    assert.deepEqual(stats.last7d.deliveries, { succeeded: 2, failed: 2, pending: 1, cancelled: 1 });
    assert.deepEqual(stats.last7d.attempts, { succeeded: 2, failed: 6 });
    assert.deepEqual(stats.last7d.attemptLatencyMs, { p50: 100, p99: 15_000 });
    assert.equal(stats.pendingDeliveries, 2, 'pending now, however old');
    assert.equal(stats.lastSuccess!.deliveryId, recovered);
    assert.equal(stats.lastSuccess!.statusCode, 200);
    assert.equal(stats.lastFailure!.statusCode, 429);
    const lastFailure = await delivery(webhook, 'failed', 0.1, [[null, 15_000, 0.01]]);
    const now = (await call(`/api/webhooks/${webhook.id}/stats`)).body as Stats;
    assert.deepEqual({ id: now.lastFailure!.deliveryId, code: now.lastFailure!.statusCode, error: now.lastFailure!.error }, { id: lastFailure, code: null, error: 'connect ECONNREFUSED' });
    assert.ok(Date.parse(now.lastFailure!.at) > Date.parse(now.lastSuccess!.at), 'failing since its last success');
    assert.ok(failing);
  });

  it('an endpoint with nothing yet: zeros and nulls', async () => {
    const webhook = await createWebhook();
    const stats = (await call(`/api/webhooks/${webhook.id}/stats`)).body as Stats;
    assert.deepEqual(stats.last24h, { deliveries: { succeeded: 0, failed: 0, pending: 0, cancelled: 0 }, attempts: { succeeded: 0, failed: 0 }, attemptLatencyMs: { p50: null, p99: null } });
    assert.equal(stats.lastSuccess, null);
    assert.equal(stats.lastFailure, null);
    assert.equal(stats.pendingDeliveries, 0);
  });

  it('every attempt carries its webhook (filled in by the database), so the stats read one index range', async () => {
    const webhook = await createWebhook();
    const id = await delivery(webhook, 'succeeded', 1, [[200, 12, 1]]);
    const { rows } = await db.query(`SELECT webhook_id FROM delivery_attempts WHERE delivery_id = $1`, [id]);
    assert.equal(rows[0].webhook_id, webhook.id);
  });

  it('404 for unknown, malformed or another account\'s webhooks; 409 for an incoming one', async () => {
    const webhook = await createWebhook();
    const stranger = await registerUser(app);
    assert.equal((await call(`/api/webhooks/${randomUUID()}/stats`)).status, 404);
    assert.equal((await call('/api/webhooks/nope/stats')).status, 404);
    assert.equal((await call(`/api/webhooks/${webhook.id}/stats`, stranger)).status, 404);
    const incoming = await app.inject({ method: 'POST', url: '/api/webhooks', headers: user.auth, payload: { name: 'in', direction: 'incoming' } });
    const res = await call(`/api/webhooks/${incoming.json().id}/stats`);
    assert.equal(res.status, 409);
    assert.match(res.body.message, /incoming/);
  });

  it('over time: every bucket of the window, its successes, failures, success rate and latency', async () => {
    const webhook = await createWebhook();
    const other = await createWebhook();
    await delivery(other, 'succeeded', 1, [[200, 5, 1]]); // not this endpoint's
    // Attempts 5 h ago (a 503 then a 200 in the same hour), 2 h ago (a timeout) and 30 h ago (outside 24 h).
    await delivery(webhook, 'succeeded', 5, [[503, 400, 5], [200, 100, 5]]);
    await delivery(webhook, 'failed', 2, [[null, 15_000, 2]]);
    await delivery(webhook, 'succeeded', 30, [[200, 50, 30]]);
    const HOUR = 3_600_000;
    const res = await call(`/api/webhooks/${webhook.id}/stats/series?window=24h`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const series = res.body as { window: string; bucketSeconds: number; buckets: { at: string; attempts: { succeeded: number; failed: number }; successRate: number | null; attemptLatencyMs: { p50: number | null; p99: number | null } }[] };
    assert.equal(series.window, '24h');
    assert.equal(series.bucketSeconds, 3600);
    assert.equal(series.buckets.length, 24);
    const hourOf = (hoursAgo: number) => new Date(Math.floor((Date.now() - hoursAgo * HOUR) / HOUR) * HOUR).toISOString();
    assert.equal(series.buckets.at(-1)!.at, hourOf(0), 'the last bucket holds now');
    assert.equal(series.buckets[0]!.at, hourOf(23));
    const nonEmpty = series.buckets.filter((b) => b.attempts.succeeded + b.attempts.failed > 0);
    assert.deepEqual(nonEmpty, [
      { at: hourOf(5), attempts: { succeeded: 1, failed: 1 }, successRate: 0.5, attemptLatencyMs: { p50: 100, p99: 400 } },
      { at: hourOf(2), attempts: { succeeded: 0, failed: 1 }, successRate: 0, attemptLatencyMs: { p50: 15_000, p99: 15_000 } },
    ]);
    assert.deepEqual(series.buckets[0], { at: hourOf(23), attempts: { succeeded: 0, failed: 0 }, successRate: null, attemptLatencyMs: { p50: null, p99: null } });

    const week = (await call(`/api/webhooks/${webhook.id}/stats/series?window=7d`)).body as typeof series;
    assert.equal(week.buckets.length, 28);
    assert.equal(week.buckets.reduce((n, b) => n + b.attempts.succeeded + b.attempts.failed, 0), 4, 'the 30 h old attempt too');
    const hour = (await call(`/api/webhooks/${webhook.id}/stats/series?window=1h`)).body as typeof series;
    assert.equal(hour.buckets.length, 60);
    assert.equal(hour.bucketSeconds, 60);
    const bad = await call(`/api/webhooks/${webhook.id}/stats/series?window=2d`);
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /^querystring\.window: /);
    assert.equal((await call(`/api/webhooks/${webhook.id}/stats/series`, await registerUser(app))).status, 404);
  });
});
