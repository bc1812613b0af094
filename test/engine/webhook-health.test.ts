import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createDeliveryActivities } from '../../activities/deliveries';
import { MAX_RETRY_AFTER_MS } from '../../engine/deliveries/attempts';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';
import { webhookCalls } from '../helpers/webhook-calls';

/**
 * An endpoint's health (docs/api.md § Webhooks): auto-disable after WEBHOOK_DISABLE_AFTER of failed attempts
 * with a `webhook.disabled` event, and Retry-After on 429/503, on a real dev server and loopback receivers.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('auto-disable after WEBHOOK_DISABLE_AFTER of failed attempts', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  const { createWebhook, deliveries, webhook } = webhookCalls(() => h);

  before(async () => {
    h = await startEngine(suite, __filename, {
      WEBHOOK_DISABLE_AFTER: '2s',
      WEBHOOK_RETRY_SCHEDULE: '0s,400ms,400ms,400ms,400ms,400ms,400ms,400ms,400ms,400ms',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
  });

  it('disables the webhook with its reason and tells the account\'s other webhooks subscribed to webhook.disabled, not itself', async () => {
    const user = await registerUser(h.app);
    const down = await startReceiver(suite, () => ({ status: 500 }));
    const watcher = await startReceiver(suite, () => ({ status: 200 }));
    const bystander = await startReceiver(suite, () => ({ status: 200 }));
    // Subscribed to everything: it would get its own webhook.disabled if it were sent to it.
    const failing = await createWebhook(user, { url: `${down.url}/hook`, events: ['*'] });
    const watching = await createWebhook(user, { url: `${watcher.url}/hook`, events: ['webhook.disabled'] });
    const other = await createWebhook(user, { url: `${bystander.url}/hook`, events: ['agent.deleted'] });

    const started = Date.now();
    assert.equal((await api(h.app, user).post(`/api/webhooks/${failing.id}/test`)).statusCode, 202);
    const disabled = await waitFor('the failing webhook to be disabled', async () => {
      const w = await webhook(user, failing.id);
      return !w.enabled && w;
    }, 15_000);
    assert.ok(Date.now() - started >= 2000, 'not before WEBHOOK_DISABLE_AFTER');
    assert.match(disabled.disabledReason!, /^every delivery attempt failed since \d{4}-\d\d-\d\dT[\d:.]+Z \(WEBHOOK_DISABLE_AFTER=2s\)$/);
    const since = Date.parse(/since (\S+)/.exec(disabled.disabledReason!)![1]!);
    assert.ok(Math.abs(since - down.requests[0]!.receivedAt) < 1000, 'failing since its first failed attempt');

    const [cancelled] = await deliveries(user, failing.id);
    assert.equal(cancelled!.status, 'cancelled', 'its pending delivery is cancelled with it');
    const sent = down.requests.length;
    const failedFor = down.requests[sent - 1]!.receivedAt - down.requests[0]!.receivedAt;
    assert.ok(sent >= 2 && sent < 10 && failedFor >= 1900, `${sent} attempts over ${failedFor} ms before it was disabled`);

    await waitFor('webhook.disabled delivered to the watching webhook', async () => watcher.requests.length === 1);
    const envelope = JSON.parse(watcher.requests[0]!.body);
    assert.equal(envelope.type, 'webhook.disabled');
    assert.equal(envelope.accountId, failing.accountId);
    assert.deepEqual(envelope.data, {
      webhookId: failing.id,
      name: 'receiver',
      reason: disabled.disabledReason,
      failingSince: new Date(since).toISOString(),
    });
    await sleep(1000);
    assert.equal(down.requests.length, sent, 'nothing more is sent to the disabled webhook, not even its own webhook.disabled');
    assert.ok(down.requests.every((r) => JSON.parse(r.body).type === 'webhook.test'));
    assert.equal(bystander.requests.length, 0);
    assert.deepEqual(await deliveries(user, other.id), []);
    assert.equal((await deliveries(user, watching.id))[0]!.eventType, 'webhook.disabled');

    const audit = await api(h.app, user).get('/api/account/audit');
    const entry = (audit.json() as { action: string; resourceId: string; actorUserId: string | null }[]).find((e) => e.action === 'webhook.disable');
    assert.deepEqual(entry && { resourceId: entry.resourceId, actor: entry.actorUserId }, { resourceId: failing.id, actor: null }, 'audited as the platform');

    // Enabled again by its user: the reason is cleared, and its failing clock starts afresh.
    const enabled = await api(h.app, user).patch(`/api/webhooks/${failing.id}`, { enabled: true });
    assert.equal(enabled.statusCode, 200, enabled.body);
    assert.equal(enabled.json().disabledReason, null);
    assert.equal(enabled.json().enabled, true);
    const { rows } = await h.db.query('SELECT failing_since FROM webhooks WHERE id = $1', [failing.id]);
    assert.equal(rows[0].failing_since, null);
  });

  it('a success in between starts the clock again', async () => {
    const user = await registerUser(h.app);
    let status = 500;
    const rx = await startReceiver(suite, () => ({ status }));
    const hook = await createWebhook(user, { url: `${rx.url}/hook`, events: ['webhook.test'] });
    // Deliveries without workflows: this test plays the workflow's part, at times it chooses.
    const { rows } = await h.db.query<{ id: string }>(
      `WITH e AS (INSERT INTO events (account_id, type, data) SELECT $1, 'webhook.test', '{}' FROM generate_series(1, 2) RETURNING id, account_id)
       INSERT INTO deliveries (account_id, webhook_id, event_id) SELECT account_id, $2, id FROM e RETURNING id`,
      [hook.accountId, hook.id],
    );
    const [failing, succeeding] = rows.map((r) => r.id);
    const { attemptDelivery } = createDeliveryActivities(h.activityDeps());
    const attempt = (deliveryId: string, n: number) => attemptDelivery({ deliveryId, generation: 0, attempt: n, nextDelayMs: 60_000, timeoutMs: 2000 });

    assert.equal(await attempt(failing!, 1), 'retry');
    await sleep(1500);
    status = 200;
    assert.equal(await attempt(succeeding!, 1), 'succeeded');
    status = 500;
    await sleep(1000);
    assert.equal(await attempt(failing!, 2), 'retry', '2.5 s after the first failure, but only 1 s after the success');
    assert.equal((await webhook(user, hook.id)).enabled, true);
    await sleep(1000);
    assert.equal(await attempt(failing!, 3), 'retry', 'failing for 1 s since the success');
    assert.equal((await webhook(user, hook.id)).enabled, true);
    await sleep(1200);
    assert.equal(await attempt(failing!, 4), 'stopped', 'failing for 2 s: disabled, and this delivery cancelled with it');
    const w = await webhook(user, hook.id);
    assert.equal(w.enabled, false);
    assert.match(w.disabledReason!, /WEBHOOK_DISABLE_AFTER=2s/);
    const since = Date.parse(/since (\S+)/.exec(w.disabledReason!)![1]!);
    assert.ok(Math.abs(since - rx.requests[2]!.receivedAt) < 500, 'failing since the first failure after the success');
  });
});

describe('Retry-After on 429 and 503', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  const { createWebhook, deliveries } = webhookCalls(() => h);

  before(async () => {
    h = await startEngine(suite, __filename, { WEBHOOK_RETRY_SCHEDULE: '0s,100ms,100ms,100ms', WEBHOOK_TIMEOUT_MS: '2000' });
  });

  /** The gap between two requests, with a second's tolerance above the asked delay and none below it. */
  function assertWaited(gapMs: number, askedMs: number) {
    assert.ok(gapMs >= askedMs - 20 && gapMs < askedMs + 1000, `the next attempt came ${gapMs} ms later; asked ${askedMs} ms`);
  }

  it('a 429 with Retry-After seconds (in the workflow) moves the next attempt, shown as nextAttemptAt', async () => {
    const user = await registerUser(h.app);
    const rx = await startReceiver(suite, (_, i) => (i === 0 ? { status: 500 } : i === 1 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 200 }));
    const hook = await createWebhook(user, { url: `${rx.url}/hook` });
    await api(h.app, user).post(`/api/webhooks/${hook.id}/test`);

    await waitFor('the 429', async () => rx.requests.length === 2);
    const pending = await waitFor('the 429 recorded', async () => {
      const [d] = await deliveries(user, hook.id);
      return d?.attempts === 2 && d;
    });
    assert.equal(pending.status, 'pending');
    assertWaited(Date.parse(pending.nextAttemptAt!) - rx.requests[1]!.receivedAt, 2000);

    await waitFor('the third attempt', async () => rx.requests.length === 3, 10_000);
    // The schedule alone would have it 100 ms after (plus the workflow's start, after the in-process first attempt):
    // well under the 429's wait, but a loaded machine can take seconds to start a workflow, so only a stall fails.
    const scheduled = rx.requests[1]!.receivedAt - rx.requests[0]!.receivedAt;
    assert.ok(scheduled < 6000, `the 500's retry came ${scheduled} ms later: its schedule's 100 ms and a workflow start`);
    assertWaited(rx.requests[2]!.receivedAt - rx.requests[1]!.receivedAt, 2000);
    await waitFor('the delivery to succeed', async () => (await deliveries(user, hook.id))[0]?.status === 'succeeded');
  });

  it('a 503 with an HTTP-date Retry-After (on the first attempt, made in-process) moves the workflow\'s first attempt', async () => {
    const user = await registerUser(h.app);
    let until = 0;
    const rx = await startReceiver(suite, (_, i) => {
      if (i > 0) return { status: 200 };
      until = Math.ceil((Date.now() + 2000) / 1000) * 1000; // an HTTP date has whole seconds
      return { status: 503, headers: { 'retry-after': new Date(until).toUTCString() } };
    });
    const hook = await createWebhook(user, { url: `${rx.url}/hook` });
    await api(h.app, user).post(`/api/webhooks/${hook.id}/test`);
    await waitFor('the second attempt', async () => rx.requests.length === 2, 10_000);
    const gap = rx.requests[1]!.receivedAt - rx.requests[0]!.receivedAt;
    assertWaited(gap, until - rx.requests[0]!.receivedAt);
    assert.ok(gap >= 2000, `${gap} ms`);
    await waitFor('the delivery to succeed', async () => (await deliveries(user, hook.id))[0]?.status === 'succeeded');
  });

  it('a Retry-After of two days waits 24 hours at most; a 500\'s Retry-After is not honoured', async () => {
    const user = await registerUser(h.app);
    const rx = await startReceiver(suite, () => ({ status: 429, headers: { 'retry-after': String(2 * 86_400) } }));
    const hook = await createWebhook(user, { url: `${rx.url}/hook` });
    await api(h.app, user).post(`/api/webhooks/${hook.id}/test`);
    const [pending] = await waitFor('the first attempt recorded', async () => {
      const list = await deliveries(user, hook.id);
      return list[0]?.attempts === 1 && list;
    });
    const waits = Date.parse(pending!.nextAttemptAt!) - rx.requests[0]!.receivedAt;
    assert.ok(Math.abs(waits - MAX_RETRY_AFTER_MS) < 5_000, `next attempt ${waits} ms after the first`);
    await sleep(500);
    assert.equal(rx.requests.length, 1);
    // Stops its workflow's day-long wait (its next attempt finds the delivery cancelled).
    await api(h.app, user).patch(`/api/webhooks/${hook.id}`, { enabled: false });

    const rx500 = await startReceiver(suite, (_, i) => (i === 0 ? { status: 500, headers: { 'retry-after': '5' } } : { status: 200 }));
    const hook500 = await createWebhook(user, { url: `${rx500.url}/hook` });
    await api(h.app, user).post(`/api/webhooks/${hook500.id}/test`);
    await waitFor('the second attempt', async () => rx500.requests.length === 2, 5_000);
    const gap = rx500.requests[1]!.receivedAt - rx500.requests[0]!.receivedAt;
    assert.ok(gap < 4000, `the second attempt came ${gap} ms later: the schedule's 100 ms (and the workflow's start), not 5 s`);
  });
});
