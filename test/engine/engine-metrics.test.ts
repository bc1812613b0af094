import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { workflowIds } from '../../engine/temporal/names';
import { startReconciler } from '../../worker/reconciler';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { histogram, sampleValue, scrape, scrapeFresh, TEST_METRICS_SNAPSHOT_MS, type Families } from '../helpers/prometheus';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';

/** GET /metrics while the real engine works (docs/operations.md § Metrics): the figures move with what the worker does. */
describe('engine metrics', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let user: TestUser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  async function call(method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) {
    const res = await h.app.inject({ method, url, headers: user.auth, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.body ? res.json() : undefined };
  }
  const moved = (before: Families, after: Families, name: string, labels: Record<string, string> = {}) =>
    sampleValue(after, name, labels) - sampleValue(before, name, labels);

  before(async () => {
    // The worker's own sweep only at start: the test sweeps when it wants to.
    h = await startEngine(suite, __filename, { SCHEDULE_SWEEP_MS: '3600000', METRICS_SNAPSHOT_MS: String(TEST_METRICS_SNAPSHOT_MS) });
    user = await registerUser(h.app);
    receiver = await startReceiver(suite);
  });

  it('fires, schedule lag, delivery attempts and their latency, deliveries and runs move as the engine works', async () => {
    const before = await scrapeFresh(h.app);
    const webhook = await call('POST', '/api/webhooks', { name: 'sink', direction: 'outgoing', url: receiver.url, events: ['agent.triggered'] });
    assert.equal(webhook.status, 201);
    const agent = (await call('POST', '/api/agents', { name: 'measured agent' })).body as { id: string };
    const manual = (await call('POST', `/api/agents/${agent.id}/triggers`, { type: 'webhook', name: 'manual', configJson: {} })).body as { id: string };
    assert.equal((await call('POST', `/api/triggers/${manual.id}/fire`, {})).status, 202);
    const cron = (await call('POST', '/api/user-triggers', { type: 'cron', name: 'every second', configJson: { cronExpression: '* * * * * *' } })).body as { id: string };

    // The manual fire's run finishes and its agent.triggered is delivered; the cron trigger fires twice.
    await waitFor('a run finished, a delivery made, two schedule fires', async () => {
      const runs = await h.db.query(`SELECT 1 FROM runs WHERE agent_id = $1 AND status = 'succeeded'`, [agent.id]);
      const delivered = await h.db.query(`SELECT 1 FROM deliveries WHERE webhook_id = $1 AND status = 'succeeded'`, [webhook.body.id]);
      const fires = await h.db.query(`SELECT 1 FROM fires WHERE trigger_id = $1 AND status = 'fired'`, [cron.id]);
      return runs.rows.length > 0 && delivered.rows.length > 0 && fires.rows.length >= 2;
    }, 30_000);
    const after = await scrapeFresh(h.app);
    assert.equal((await call('DELETE', `/api/user-triggers/${cron.id}`)).status, 204);

    assert.equal(moved(before, after, 'agent_platform_fires_total', { source: 'manual', status: 'fired' }), 1);
    assert.ok(moved(before, after, 'agent_platform_fires_total', { source: 'schedule', status: 'fired' }) >= 2);
    const lag = histogram(after, 'agent_platform_fire_lag_seconds');
    assert.ok(lag.count - histogram(before, 'agent_platform_fire_lag_seconds').count >= 2);
    assert.ok(lag.sum > 0, 'a fire is recorded after its scheduled time');
    assert.ok(moved(before, after, 'agent_platform_delivery_attempts_total', { outcome: 'succeeded' }) >= 1);
    const latency = histogram(after, 'agent_platform_delivery_attempt_duration_seconds', { outcome: 'succeeded' });
    assert.ok(latency.count >= 1 && latency.buckets['+Inf'] === latency.count);
    assert.ok(moved(before, after, 'agent_platform_deliveries_total', { outcome: 'succeeded' }) >= 1);
    assert.ok(moved(before, after, 'agent_platform_runs_finished_total', { status: 'succeeded' }) >= 1);
    assert.equal(sampleValue(after, 'agent_platform_engine_metrics_up'), 1);
    // The endpoint's health shows the same real attempts (each carries its webhook: migration 13's trigger).
    const stats = (await call('GET', `/api/webhooks/${webhook.body.id}/stats`)).body as { last24h: { attempts: { succeeded: number } }; lastSuccess: { statusCode: number } | null };
    assert.ok(stats.last24h.attempts.succeeded >= 1);
    assert.equal(stats.lastSuccess?.statusCode, 200);
    // The outbox drains: nothing is left behind once the work is handed off.
    await waitFor('the outbox drained', async () => sampleValue(await scrape(h.app), 'agent_platform_outbox_rows') === 0, 20_000);
  });

  it('the reconciler logs which schedule it corrected and why, and the correction is counted', async () => {
    const trigger = (await call('POST', '/api/user-triggers', { type: 'cron', name: 'yearly', configJson: { cronExpression: '0 0 1 1 *' } })).body as { id: string };
    const handle = h.engine.client.schedule.getHandle(workflowIds.triggerSchedule(trigger.id));
    await waitFor('its schedule', () => handle.describe().catch(() => undefined), 20_000);
    const before = await scrapeFresh(h.app);
    await handle.delete(); // behind the API's back, e.g. by hand in the Temporal UI

    const lines: string[] = [];
    const reconciler = startReconciler({
      db: h.db, client: h.engine.client, handOff: h.engine.handOff, transaction: h.engine.composed.transaction, intervalMs: 60_000, sweepEveryMs: 3_600_000,
      log: (msg) => lines.push(msg),
    });
    try {
      await waitFor('the correction logged', async () => {
        await reconciler.sweep();
        return lines.some((l) => l.includes(trigger.id));
      }, 20_000);
    } finally {
      await reconciler.stop();
    }
    const line = lines.find((l) => l.includes(trigger.id))!;
    assert.match(line, new RegExp(`corrected schedule trigger:${trigger.id} \\(missing: Temporal has no schedule`));
    await h.engine.handOff.drain();
    await waitFor('the schedule re-created', () => handle.describe().catch(() => undefined), 20_000);
    const after = await scrapeFresh(h.app);
    assert.equal(moved(before, after, 'agent_platform_reconciler_corrections_total', { reason: 'missing' }), 1);
    // A sweep that finds nothing different corrects nothing.
    const quiet = startReconciler({ db: h.db, client: h.engine.client, handOff: h.engine.handOff, transaction: h.engine.composed.transaction, intervalMs: 60_000, sweepEveryMs: 3_600_000, log: (msg) => lines.push(msg) });
    const seen = lines.length;
    await quiet.stop();
    assert.equal(lines.slice(seen).filter((l) => l.includes(trigger.id)).length, 0);
    assert.equal(moved(after, await scrapeFresh(h.app), 'agent_platform_reconciler_corrections_total', { reason: 'missing' }), 0);
    await call('DELETE', `/api/user-triggers/${trigger.id}`);
  });
});
