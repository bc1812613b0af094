import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { buildApp } from '../../api/app';
import { createMetricsService } from '../../api/services/metrics-service';
import { createMetricsRepository, type MetricsRepository } from '../../db/repositories/metrics';
import { createTemporalClient } from '../../engine/temporal/client';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { testConfig, testEnv } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';
import { startProcess, waitFor } from '../helpers/processes';
import { family, histogram, sampleValue, scrape, scrapeFresh, TEST_METRICS_SNAPSHOT_MS } from '../helpers/prometheus';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** GET /metrics and request ids (docs/operations.md § Metrics), on a real database; the engine's side in test/engine/engine-metrics.test.ts. */
describe('metrics and request ids', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let user: TestUser;

  before(async () => {
    ({ app, db } = await startTestApp(suite, { METRICS_SNAPSHOT_MS: String(TEST_METRICS_SNAPSHOT_MS) }));
    user = await registerUser(app);
  });

  it('counts and times requests by route pattern and status, never by URL', async () => {
    const agent = (await app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: 'measured' } })).json<{ id: string }>();
    const labels = { method: 'GET', route: '/api/agents/:id', status: '200' };
    const before = await scrape(app);
    for (let i = 0; i < 3; i++) assert.equal((await app.inject({ method: 'GET', url: `/api/agents/${agent.id}`, headers: user.auth })).statusCode, 200);
    const missing = await app.inject({ method: 'GET', url: `/api/agents/${randomUUID()}`, headers: user.auth });
    assert.equal(missing.statusCode, 404);
    assert.equal((await app.inject({ method: 'GET', url: `/no/such/${randomUUID()}` })).statusCode, 404);
    const after = await scrape(app);

    assert.equal(sampleValue(after, 'agent_platform_http_requests_total', labels) - sampleValue(before, 'agent_platform_http_requests_total', labels), 3);
    assert.equal(
      sampleValue(after, 'agent_platform_http_requests_total', { ...labels, status: '404' }) -
        sampleValue(before, 'agent_platform_http_requests_total', { ...labels, status: '404' }),
      1,
    );
    assert.equal(sampleValue(after, 'agent_platform_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
    const timed = histogram(after, 'agent_platform_http_request_duration_seconds', labels);
    assert.equal(timed.count - histogram(before, 'agent_platform_http_request_duration_seconds', labels).count, 3);
    assert.ok(timed.sum > 0 && timed.buckets['+Inf'] === timed.count, 'a latency histogram whose +Inf bucket holds every request');
    // No series is labelled with an id or a raw URL.
    for (const sample of family(after, 'agent_platform_http_requests_total').metrics) {
      assert.doesNotMatch(sample.labels!.route!, /[0-9a-f]{8}-[0-9a-f]{4}/, `route label ${sample.labels!.route}`);
    }
  });

  it('shows the outbox: its rows and the age of the oldest', async () => {
    // The work earlier requests queued is handed off first (the oldest row is the first written).
    await waitFor('the outbox drained', async () => (await db.query(`SELECT 1 FROM outbox`)).rows.length === 0, 20_000);
    // A row the hand-off will not take yet (available in an hour), written 90 s ago.
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO outbox (kind, payload, available_at, created_at) VALUES ('schedule', $1, now() + interval '1 hour', now() - interval '90 seconds') RETURNING id`,
      [JSON.stringify({ triggerId: randomUUID() })],
    );
    const backlog = await scrapeFresh(app);
    assert.ok(sampleValue(backlog, 'agent_platform_outbox_rows') >= 1);
    assert.ok(sampleValue(backlog, 'agent_platform_outbox_oldest_age_seconds') >= 90);
    await db.query(`DELETE FROM outbox WHERE id = $1`, [rows[0]!.id]);
    const drained = await scrapeFresh(app);
    assert.ok(sampleValue(drained, 'agent_platform_outbox_oldest_age_seconds') < 90);
    assert.equal(sampleValue(drained, 'agent_platform_engine_metrics_up'), 1);
  });

  it('counts the engine\'s rows written since the last scrape: fires with their lag, attempts with their latency, finished deliveries', async () => {
    const trigger = (await app.inject({
      method: 'POST', url: '/api/user-triggers', headers: user.auth,
      payload: { type: 'webhook', name: 'lagging', configJson: {} },
    })).json<{ id: string; accountId: string }>();
    const webhook = (await app.inject({
      method: 'POST', url: '/api/webhooks', headers: user.auth,
      payload: { name: 'sink', direction: 'outgoing', url: 'http://127.0.0.1:9/hook', events: ['*'] },
    })).json<{ id: string }>();
    const account = trigger.accountId;
    const before = await scrapeFresh(app);

    // Two schedule fires recorded 0.3 s and 7 s after their scheduled times, and a manual one.
    await db.query(
      `INSERT INTO fires (account_id, trigger_id, fire_key, source, status, scheduled_at, created_at) VALUES
         ($1, $2, 'schedule-a', 'schedule', 'fired', now() - interval '0.3 seconds', now()),
         ($1, $2, 'schedule-b', 'schedule', 'throttled', now() - interval '7 seconds', now()),
         ($1, $2, 'manual-c', 'manual', 'fired', NULL, now())`,
      [account, trigger.id],
    );
    // A delivery with a 2xx attempt of 120 ms and a failed one of 3 s, then finished.
    const event = await db.query<{ id: string }>(`INSERT INTO events (account_id, type, data) VALUES ($1, 'webhook.test', '{}') RETURNING id`, [account]);
    const delivery = await db.query<{ id: string }>(
      `INSERT INTO deliveries (account_id, webhook_id, event_id) VALUES ($1, $2, $3) RETURNING id`,
      [account, webhook.id, event.rows[0]!.id],
    );
    await db.query(
      `INSERT INTO delivery_attempts (delivery_id, generation, attempt, status_code, error, duration_ms) VALUES ($1, 0, 1, 503, 'HTTP 503', 3000), ($1, 0, 2, 204, NULL, 120)`,
      [delivery.rows[0]!.id],
    );
    await db.query(`UPDATE deliveries SET status = 'succeeded' WHERE id = $1`, [delivery.rows[0]!.id]);
    // Counted once no transaction older than these rows is still open (another request's may be, a moment).
    const after = await waitFor('the rows counted', async () => {
      const scraped = await scrape(app);
      return sampleValue(scraped, 'agent_platform_deliveries_total', { outcome: 'succeeded' }) > sampleValue(before, 'agent_platform_deliveries_total', { outcome: 'succeeded' }) && scraped;
    }, 20_000);

    const moved = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    assert.equal(moved('agent_platform_fires_total', { source: 'schedule', status: 'fired' }), 1);
    assert.equal(moved('agent_platform_fires_total', { source: 'schedule', status: 'throttled' }), 1);
    assert.equal(moved('agent_platform_fires_total', { source: 'manual', status: 'fired' }), 1);
    const lagBefore = histogram(before, 'agent_platform_fire_lag_seconds');
    const lag = histogram(after, 'agent_platform_fire_lag_seconds');
    assert.equal(lag.count - lagBefore.count, 2);
    assert.equal(lag.buckets['0.5']! - lagBefore.buckets['0.5']!, 1, 'the 0.3 s lag is under 0.5 s');
    assert.equal(lag.buckets['10']! - lagBefore.buckets['10']!, 2, 'both are under 10 s');
    assert.ok(Math.abs(lag.sum - lagBefore.sum - 7.3) < 0.01, `lag sum ${lag.sum - lagBefore.sum}`);

    assert.equal(moved('agent_platform_delivery_attempts_total', { outcome: 'succeeded' }), 1);
    assert.equal(moved('agent_platform_delivery_attempts_total', { outcome: 'failed' }), 1);
    const slow = histogram(after, 'agent_platform_delivery_attempt_duration_seconds', { outcome: 'failed' });
    const slowBefore = histogram(before, 'agent_platform_delivery_attempt_duration_seconds', { outcome: 'failed' });
    assert.equal(slow.buckets['2.5']! - slowBefore.buckets['2.5']!, 0);
    assert.equal(slow.buckets['5']! - slowBefore.buckets['5']!, 1);
    assert.equal(moved('agent_platform_deliveries_total', { outcome: 'succeeded' }), 1);

    // Counted once: a scrape with nothing new moves nothing.
    const again = await scrapeFresh(app);
    assert.equal(sampleValue(again, 'agent_platform_fires_total', { source: 'manual', status: 'fired' }), sampleValue(after, 'agent_platform_fires_total', { source: 'manual', status: 'fired' }));
    assert.equal(histogram(again, 'agent_platform_fire_lag_seconds').count, lag.count);
  });

  it('a row of a transaction still open when a scrape runs is counted by the next one, once', async () => {
    const trigger = (await app.inject({
      method: 'POST', url: '/api/user-triggers', headers: user.auth,
      payload: { type: 'webhook', name: 'slow commit', configJson: {} },
    })).json<{ id: string; accountId: string }>();
    const count = (families: Awaited<ReturnType<typeof scrape>>) => sampleValue(families, 'agent_platform_fires_total', { source: 'webhook', status: 'fired' });
    const start = count(await scrapeFresh(app));
    const tx = await db.connect();
    try {
      await tx.query('BEGIN');
      await tx.query(
        `INSERT INTO fires (account_id, trigger_id, fire_key, source, status) VALUES ($1, $2, 'hook-late', 'webhook', 'fired')`,
        [trigger.accountId, trigger.id],
      );
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(count(await scrapeFresh(app)), start, 'not visible yet');
      await tx.query('COMMIT');
    } finally {
      tx.release();
    }
    assert.equal(count(await scrapeFresh(app)), start + 1, 'counted after its commit, though stamped before the previous scrape');
    assert.equal(count(await scrapeFresh(app)), start + 1);
  });

  it('every response sends Request-Id: the caller\'s when well-formed, else a new one', async () => {
    const fresh = await app.inject({ method: 'GET', url: '/api/health' });
    assert.match(String(fresh.headers['request-id']), UUID);
    const kept = await app.inject({ method: 'GET', url: '/api/health', headers: { 'request-id': 'lb-7f3a:01HZX.abc_9' } });
    assert.equal(kept.headers['request-id'], 'lb-7f3a:01HZX.abc_9');
    for (const bad of ['has spaces', 'x'.repeat(129), '<script>', 'a;b', '-leading']) {
      const res = await app.inject({ method: 'GET', url: '/api/health', headers: { 'request-id': bad } });
      assert.match(String(res.headers['request-id']), UUID, `${JSON.stringify(bad)} is replaced`);
    }
    const error = await app.inject({ method: 'GET', url: `/api/agents/${randomUUID()}`, headers: { ...user.auth, 'request-id': 'trace-404' } });
    assert.equal(error.statusCode, 404);
    assert.equal(error.headers['request-id'], 'trace-404');
  });

  it('every log line of a request carries its id', async (t) => {
    const lines: Record<string, unknown>[] = [];
    const database = await createTestDatabase(t);
    const config = testConfig(database.url, { LOG_LEVEL: 'info' });
    const temporal = createTemporalClient(config);
    onCleanup(t, () => temporal.close());
    const logged = await buildApp({
      config, db: database.db, temporal,
      logger: { level: 'info', stream: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } },
    });
    onCleanup(t, () => logged.close());
    {
      await logged.inject({ method: 'GET', url: '/api/health', headers: { 'request-id': 'req-one' } });
      await logged.inject({ method: 'POST', url: '/api/agents', payload: { name: 'x' }, headers: { 'request-id': 'req-two' } });
      const ofRequests = lines.filter((l) => l.req !== undefined || l.res !== undefined || l.responseTime !== undefined);
      assert.ok(ofRequests.length >= 4, `request log lines: ${JSON.stringify(lines)}`);
      for (const line of ofRequests) assert.ok(['req-one', 'req-two'].includes(line.reqId as string), JSON.stringify(line));
    }
  });
});

/** The metrics repository over a real database, counting the calls that read the engine's figures. */
function countedRepository(db: Db): { repository: MetricsRepository; reads: () => number } {
  const real = createMetricsRepository(db);
  let reads = 0;
  return {
    repository: { ...real, state: (...args: Parameters<MetricsRepository['state']>) => (reads++, real.state(...args)) },
    reads: () => reads,
  };
}

describe('the engine figures\' snapshot', () => {
  it('reads the database once per METRICS_SNAPSHOT_MS however many scrape, concurrent scrapes sharing one read', async (t) => {
    const { db } = await createTestDatabase(t);
    const counted = countedRepository(db);
    const metrics = createMetricsService({ metrics: counted.repository, pollers: async () => [], log: () => {}, snapshotMs: 5_000 });
    const started = Date.now();
    const first = await Promise.all(Array.from({ length: 50 }, () => metrics.render()));
    const concurrent = counted.reads();
    for (let i = 0; i < 100; i++) await metrics.render();
    const elapsed = Date.now() - started;
    console.log(`50 concurrent scrapes, then 100 more in ${elapsed} ms: ${counted.reads()} read(s) of the engine figures`);
    assert.equal(concurrent, 1, '50 concurrent scrapes share one read');
    if (elapsed < 5_000) assert.equal(counted.reads(), 1, 'no second read within the snapshot\'s 5 s');
    assert.ok(first.every((text) => text.includes('agent_platform_engine_metrics_up 1')));
  });

  it('is never older than METRICS_SNAPSHOT_MS: the first scrape after it reads again, and a row written meanwhile shows', async (t) => {
    const { db } = await createTestDatabase(t);
    const counted = countedRepository(db);
    const metrics = createMetricsService({ metrics: counted.repository, pollers: async () => [], log: () => {}, snapshotMs: 300 });
    const rows = (text: string) => Number(/^agent_platform_outbox_rows (\d+)$/m.exec(text)![1]);
    const before = rows(await metrics.render());
    await db.query(
      `INSERT INTO outbox (kind, payload, available_at) VALUES ('schedule', $1, now() + interval '1 hour')`,
      [JSON.stringify({ triggerId: randomUUID() })],
    );
    assert.equal(rows(await metrics.render()), before, 'served from the snapshot');
    await new Promise((r) => setTimeout(r, 350));
    assert.equal(rows(await metrics.render()), before + 1, 'read again once the snapshot is 300 ms old');
    assert.equal(counted.reads(), 2);
  });
});

describe('METRICS_TOKEN and METRICS_ENABLED', () => {
  it('the API refuses to start on a non-loopback HOST without METRICS_TOKEN: one line, exit code 1', async (t) => {
    const api = startProcess('api/server.ts', {
      ...testEnv('postgres://postgres@127.0.0.1:1/unreachable'),
      HOST: '0.0.0.0',
      PORT: '0',
      METRICS_TOKEN: '',
      METRICS_ENABLED: '',
    });
    onCleanup(t, () => api.stop('SIGKILL'));
    const code = await Promise.race([
      once(api.child, 'exit').then(([exitCode]) => exitCode as number | null),
      new Promise<string>((r) => setTimeout(() => r('still running after 20 s'), 20_000).unref()),
    ]);
    const lines = api.output().trim().split('\n');
    console.log(`exit code ${code}: ${api.output().trim()}`);
    assert.equal(code, 1);
    assert.equal(lines.length, 1, api.output());
    assert.match(lines[0]!, /METRICS_TOKEN is required when HOST \(0\.0\.0\.0\) is not a loopback address/);
  });

  it('with a token, /metrics answers 401 without it or with another, 200 with it', async (t) => {
    const token = 'prometheus-scrape-token-0123456789';
    const { app } = await startTestApp(t, { METRICS_TOKEN: token });
    {
      const none = await app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(none.statusCode, 401);
      assert.equal(none.headers['www-authenticate'], 'Bearer');
      assert.match(none.json<{ message: string }>().message, /METRICS_TOKEN/);
      assert.equal((await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}x` } })).statusCode, 401);
      assert.equal((await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: token } })).statusCode, 401);
      const families = await scrape(app, { authorization: `Bearer ${token}` });
      assert.ok(sampleValue(families, 'agent_platform_http_requests_total', { route: '/metrics', status: '401' }) >= 3);
    }
  });

  it('disabled: no /metrics route, and requests are still answered with their id', async (t) => {
    const { app } = await startTestApp(t, { METRICS_ENABLED: 'false' });
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 404);
    assert.match(String(res.headers['request-id']), UUID);
  });
});
