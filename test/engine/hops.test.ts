import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';

/**
 * One hop per effect: what each effect costs in Temporal workflows, counted on the real dev server, so a
 * change that adds a hop back (a dispatch workflow per event, a workflow per delivery that needs none,
 * an activity task per fire) fails here. Each case runs in an account of its own and counts every
 * workflow tagged with it (AccountId).
 */
describe('Temporal workflows started per effect', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let base: string;

  before(async () => {
    h = await startEngine(suite, __filename);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  });

  async function call(u: TestUser, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) {
    const res = method === 'GET' ? await api(h.app, u).get(url) : method === 'POST' ? await api(h.app, u).post(url, payload) : await api(h.app, u).patch(url, payload);
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  }

  /** An account with one outgoing webhook subscribed to `events`, and the receiver it delivers to. */
  async function accountWithWebhook(events: string[]) {
    const user = await registerUser(h.app);
    const receiver = await startReceiver(suite);
    await call(user, 'POST', '/api/webhooks', { name: 'subscriber', url: receiver.url, events });
    const { id: accountId } = await call(user, 'GET', '/api/account');
    return { user, receiver, accountId: accountId as string };
  }

  /**
   * Workflows of the account by type, once `expected` are all visible and nothing more has come for a
   * moment (visibility lags a little behind the starts).
   */
  async function workflowsOf(accountId: string, expected: Record<string, number>): Promise<{ counts: Record<string, number>; ids: string[] }> {
    const list = async () => {
      const counts: Record<string, number> = {};
      const ids: string[] = [];
      for await (const wf of h.engine.client.workflow.list({ query: `AccountId = '${accountId}'` })) {
        counts[wf.type] = (counts[wf.type] ?? 0) + 1;
        ids.push(wf.workflowId);
      }
      return { counts, ids };
    };
    const total = Object.values(expected).reduce((a, b) => a + b, 0);
    await waitFor('the workflows to be visible', async () => (await list()).ids.length >= total, 20_000).catch(async (err) => {
      throw new Error(`${err}: ${JSON.stringify((await list()).counts)}`);
    });
    await new Promise((r) => setTimeout(r, 1_500)); // nothing more on its way
    return list();
  }

  /** Nothing of the account is left in the outbox: no held workflow start waits to be handed off. */
  async function outboxOf(accountId: string): Promise<number> {
    const { rows } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE payload #>> '{tags,accountId}' = $1`, [accountId]);
    return rows[0]!.n;
  }

  it('a manual fire of an unlinked trigger with one subscribed webhook: no workflow at all', async () => {
    const { user, receiver, accountId } = await accountWithWebhook(['trigger.fired']);
    const trigger = await call(user, 'POST', '/api/user-triggers', { type: 'webhook', name: 'manual' });
    const { fireId } = await call(user, 'POST', `/api/user-triggers/${trigger.id}/fire`, {});
    await waitFor('the delivery', async () => receiver.requests.some((r) => JSON.parse(r.body).data.fireId === fireId), 30_000);
    assert.deepEqual((await workflowsOf(accountId, {})).counts, {});
    assert.equal(await outboxOf(accountId), 0, 'the held start of the delivery was dropped');
    const { rows } = await h.db.query(`SELECT status, attempts FROM deliveries WHERE account_id = $1`, [accountId]);
    assert.deepEqual(rows, [{ status: 'succeeded', attempts: 1 }]);
  });

  it('a trigger hook request with one subscribed webhook: no workflow at all', async () => {
    const { user, receiver, accountId } = await accountWithWebhook(['trigger.fired']);
    const trigger = await call(user, 'POST', '/api/user-triggers', { type: 'webhook', name: 'hooked' });
    const res = await fetch(`${base}/api/hooks/triggers/${trigger.configJson.webhookPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-trigger-token': trigger.configJson.secretToken },
      body: JSON.stringify({ n: 1 }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    await waitFor('the delivery', async () => receiver.requests.length === 1, 30_000);
    assert.deepEqual((await workflowsOf(accountId, {})).counts, {});
    assert.equal(await outboxOf(accountId), 0);
  });

  it('a scheduled fire with one subscribed webhook: its fire workflow, recorded in a local activity, and no delivery workflow', async () => {
    const { user, receiver, accountId } = await accountWithWebhook(['trigger.fired']);
    const trigger = await call(user, 'POST', '/api/user-triggers', { type: 'cron', name: 'ticks', configJson: { cronExpression: '* * * * * *' } });
    await waitFor('a delivery', async () => receiver.requests.length >= 1, 30_000);
    await call(user, 'PATCH', `/api/user-triggers/${trigger.id}`, { enabled: false });
    await waitFor('the schedule paused', async () => (await h.engine.client.schedule.getHandle(`trigger:${trigger.id}`).describe()).state.paused, 10_000);
    await new Promise((r) => setTimeout(r, 2_000)); // a fire already under way when the pause landed
    const { rows } = await h.db.query<{ n: number; fired: number }>(
      `SELECT count(*)::int AS n, (count(*) FILTER (WHERE status = 'fired'))::int AS fired FROM fires WHERE trigger_id = $1`,
      [trigger.id],
    );
    const { n: fires, fired } = rows[0]!;

    const { counts, ids } = await workflowsOf(accountId, { fireTriggerWorkflow: fires });
    assert.deepEqual(counts, { fireTriggerWorkflow: fires });
    await waitFor('every delivery', async () => receiver.requests.length === fired, 10_000);

    // The fire recorded itself in a local activity: no activity task went through Temporal, one workflow task in all.
    const history = await h.engine.client.workflow.getHandle(ids[0]!).fetchHistory();
    const events = history.events!;
    assert.equal(events.filter((e) => e.activityTaskScheduledEventAttributes).length, 0, 'no activity task');
    assert.equal(events.filter((e) => e.markerRecordedEventAttributes).length, 1, 'one local activity');
    assert.equal(events.filter((e) => e.workflowTaskCompletedEventAttributes).length, 1, 'one workflow task');
  });

  it('an event written by the API (agent.created) with one subscribed webhook: no workflow at all', async () => {
    const { user, receiver, accountId } = await accountWithWebhook(['agent.created']);
    await call(user, 'POST', '/api/agents', { name: 'counted' });
    await waitFor('the delivery', async () => receiver.requests.length === 1, 30_000);
    assert.deepEqual((await workflowsOf(accountId, {})).counts, {});
  });

  it('an incoming webhook request with one subscribed webhook: no workflow at all', async () => {
    const { user, receiver, accountId } = await accountWithWebhook(['webhook.received']);
    const incoming = await call(user, 'POST', '/api/webhooks', { name: 'in', direction: 'incoming' });
    const res = await fetch(`${base}/api/hooks/webhooks/${incoming.id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });
    assert.equal(res.status, 202);
    await waitFor('the delivery', async () => receiver.requests.length === 1, 30_000);
    assert.deepEqual((await workflowsOf(accountId, {})).counts, {});
  });

  it('a delivery whose first attempt fails: one delivery workflow, for the retries only', async () => {
    const user = await registerUser(h.app);
    const receiver = await startReceiver(suite, (_req, i) => ({ status: i === 0 ? 500 : 200 }));
    const webhook = await call(user, 'POST', '/api/webhooks', { name: 'flaky', url: receiver.url, events: ['agent.created'] });
    await call(user, 'POST', '/api/agents', { name: 'retried' });
    await waitFor('the second attempt', async () => receiver.requests.length === 2, 30_000);
    const { id: accountId } = await call(user, 'GET', '/api/account');
    const { ids, counts } = await workflowsOf(accountId, { deliverWebhookWorkflow: 1 });
    assert.deepEqual(counts, { deliverWebhookWorkflow: 1 });
    const delivery = await waitFor('the delivery to succeed', async () => {
      const { rows } = await h.db.query(`SELECT id, status, attempts FROM deliveries WHERE webhook_id = $1`, [webhook.id]);
      return rows[0]?.status === 'succeeded' && rows[0];
    }, 10_000);
    assert.equal(delivery.attempts, 2);
    assert.deepEqual(ids, [`delivery:${delivery.id}`]);
    const attempts = await h.db.query(`SELECT attempt, status_code FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`, [delivery.id]);
    assert.deepEqual(attempts.rows, [{ attempt: 1, status_code: 500 }, { attempt: 2, status_code: 200 }]);
  });

  it('an event matching an event trigger: the event fire workflow, and no workflow for the event or the delivery', async () => {
    const { user, receiver, accountId } = await accountWithWebhook(['trigger.fired']);
    const listener = await call(user, 'POST', '/api/user-triggers', {
      type: 'event',
      name: 'on agents',
      configJson: { eventType: 'agent.created', eventFilter: { name: { $regex: '^chain' } } },
    });
    await call(user, 'POST', '/api/agents', { name: 'chained' });
    await waitFor('the chained fire delivered', async () => receiver.requests.length === 1, 30_000);
    const { counts, ids } = await workflowsOf(accountId, { fireTriggerWorkflow: 1 });
    assert.deepEqual(counts, { fireTriggerWorkflow: 1 });
    assert.ok(ids.some((id) => id.startsWith(`fire:${listener.id}:event-`)));
  });
});
