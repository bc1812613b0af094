import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';
import { SLOT_FREED_SIGNAL } from '../../engine/temporal/names';

const LIMIT = 5;
const WAIT_MS = 4_000;

/**
 * A burst to one webhook (engine/deliveries/first-attempts.ts, engine/deliveries/slot-waits.ts): first attempts that find the
 * webhook at DELIVERY_CONCURRENCY_PER_WEBHOOK wait for a slot in the process that wrote them, in the
 * webhook's line, and need no workflow, however slowly the line moves; only one whose line stopped (no slot
 * given back for WEBHOOK_TIMEOUT_MS + DELIVERY_FIRST_ATTEMPT_WAIT_MS) goes to its `delivery:<id>` workflow, and
 * is delivered from there.
 */
describe(`a burst to one webhook (DELIVERY_CONCURRENCY_PER_WEBHOOK=${LIMIT}, DELIVERY_FIRST_ATTEMPT_WAIT_MS=${WAIT_MS})`, () => {
  const suite = suiteContext();
  let h: EngineHarness;

  before(async () => {
    h = await startEngine(suite, __filename, {
      DELIVERY_CONCURRENCY_PER_WEBHOOK: String(LIMIT),
      DELIVERY_FIRST_ATTEMPT_WAIT_MS: String(WAIT_MS),
      WEBHOOK_TIMEOUT_MS: '10000',
    });
  });

  /** Workflow types of the account (visibility lags a little behind starts: waits for `expected`, then a moment more). */
  async function workflowsOf(accountId: string, expected: number): Promise<Record<string, number>> {
    const list = async () => {
      const counts: Record<string, number> = {};
      for await (const wf of h.engine.client.workflow.list({ query: `AccountId = '${accountId}'` })) counts[wf.type] = (counts[wf.type] ?? 0) + 1;
      return counts;
    };
    const total = async () => Object.values(await list()).reduce((a, b) => a + b, 0);
    await waitFor('the workflows to be visible', async () => (await total()) >= expected, 20_000);
    await new Promise((r) => setTimeout(r, 1_500)); // nothing more on its way
    return list();
  }

  async function burst(count: number, delayMs: number) {
    const receiver = await startReceiver(suite, () => ({ status: 200, delayMs }));
    const user = await registerUser(h.app);
    const hook = await api(h.app, user).ok('POST', '/api/webhooks', { name: 'burst', url: `${receiver.url}/hook` });
    await Promise.all(Array.from({ length: count }, (_, i) => api(h.app, user).ok('POST', `/api/webhooks/${hook.id}/test`, { payload: { i } })));
    const deliveries = await waitFor('every delivery to succeed', async () => {
      const { rows } = await h.db.query<{ id: string; status: string; attempts: number }>(`SELECT id, status, attempts FROM deliveries WHERE webhook_id = $1`, [hook.id]);
      return rows.length === count && rows.every((d) => d.status === 'succeeded') && rows;
    }, 60_000);
    return { receiver, accountId: hook.accountId as string, deliveries };
  }

  it('30 deliveries at once: at most the limit in flight at the receiver, each sent once, and no workflow at all', async () => {
    const { receiver, accountId, deliveries } = await burst(30, 100);
    assert.deepEqual(await workflowsOf(accountId, 0), {}, 'the waiting first attempts needed no delivery workflow');
    assert.equal(receiver.requests.length, 30);
    assert.equal(new Set(receiver.requests.map((r) => (JSON.parse(r.body) as { id: string }).id)).size, 30, 'each delivery sent once');
    assert.ok(receiver.load.maxInFlight <= LIMIT, `${receiver.load.maxInFlight} requests in flight at once`);
    assert.ok(receiver.load.maxInFlight > 1, `the slots were used side by side (${receiver.load.maxInFlight} at most)`);
    assert.ok(deliveries.every((d) => d.attempts === 1));
    const { rows } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE payload #>> '{tags,accountId}' = $1`, [accountId]);
    assert.equal(rows[0]!.n, 0, 'every held start was dropped');
  });

  it('a waiter whose held start was handed off meanwhile (its renewal too late) sends nothing: the workflow makes the attempt, once', async () => {
    const receiver = await startReceiver(suite, () => ({ status: 200, delayMs: 5_000 }));
    const user = await registerUser(h.app);
    const hook = await api(h.app, user).ok('POST', '/api/webhooks', { name: 'handed off', url: `${receiver.url}/hook` });
    await Promise.all(Array.from({ length: LIMIT + 1 }, (_, i) => api(h.app, user).ok('POST', `/api/webhooks/${hook.id}/test`, { payload: { i } })));
    await waitFor('the limit in flight', async () => receiver.requests.length === LIMIT, 10_000);
    // The one beyond the limit waits here, in the webhook's line (not holding a slot), its start held.
    const [waiting] = (
      await h.db.query<{ id: number; delivery: string }>(
        `SELECT o.id, s.delivery_id AS delivery FROM delivery_slots s JOIN outbox o ON o.payload->>'workflowId' = 'delivery:' || s.delivery_id
         WHERE s.webhook_id = $1 AND NOT s.holding`,
        [hook.id],
      )
    ).rows;
    assert.ok(waiting, 'a first attempt waits in line, its start held');
    // Its hold runs out before the renewal (as under load): the hand-off takes the row and starts the
    // workflow, whose first task waits (no worker) until the line has moved.
    await h.stopWorker();
    try {
      await h.db.query(`UPDATE outbox SET available_at = now() - interval '1 second' WHERE id = $1`, [waiting.id]);
      await h.engine.handOff.drain();
      await waitFor('the workflow to start', async () => h.engine.client.workflow.getHandle(`delivery:${waiting.delivery}`).describe().then(() => true, () => false), 10_000);
      await waitFor('the first ones to succeed', async () => {
        const { rows } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1 AND status = 'succeeded'`, [hook.id]);
        return rows[0]!.n === LIMIT;
      }, 20_000);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(receiver.requests.length, LIMIT, 'the waiter sent nothing once its start was handed off');
    } finally {
      await h.startWorker();
    }
    await waitFor('every delivery to succeed', async () => {
      const { rows } = await h.db.query<{ status: string }>(`SELECT status FROM deliveries WHERE webhook_id = $1`, [hook.id]);
      return rows.length === LIMIT + 1 && rows.every((d) => d.status === 'succeeded');
    }, 60_000);
    await new Promise((r) => setTimeout(r, 1_000)); // a second send would be under way by now
    const sent = receiver.requests.map((r) => (JSON.parse(r.body) as { id: string }).id);
    assert.equal(sent.length, LIMIT + 1, `each delivery sent once (${sent.length} requests)`);
    assert.equal(new Set(sent).size, LIMIT + 1);
    assert.ok(receiver.load.maxInFlight <= LIMIT, `${receiver.load.maxInFlight} requests in flight at once`);
  });

  it('a slow line is waited out here: each request held longer than the wait grace, still no workflow', async () => {
    // Each request is held longer than DELIVERY_FIRST_ATTEMPT_WAIT_MS, within WEBHOOK_TIMEOUT_MS: the line
    // moves slowly, not never, and the five beyond the limit wait for it here.
    const { receiver, accountId, deliveries } = await burst(2 * LIMIT, WAIT_MS + 1_500);
    assert.equal(receiver.requests.length, 2 * LIMIT);
    assert.ok(receiver.load.maxInFlight <= LIMIT, `${receiver.load.maxInFlight} requests in flight at once`);
    assert.ok(deliveries.every((d) => d.attempts === 1), 'waiting used no attempt');
    assert.deepEqual(await workflowsOf(accountId, 0), {}, 'no delivery workflow');
    await waitFor('every slot and place in line given back', async () => {
      const { rows } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM delivery_slots`);
      return rows[0]!.n === 0;
    }, 5_000);
  });
});

describe('a burst to a webhook whose line stopped (its slots held by a dead process, WEBHOOK_TIMEOUT_MS=1000, DELIVERY_FIRST_ATTEMPT_WAIT_MS=1000)', () => {
  const suite = suiteContext();
  let h: EngineHarness;

  before(async () => {
    h = await startEngine(suite, __filename, { DELIVERY_CONCURRENCY_PER_WEBHOOK: String(LIMIT), DELIVERY_FIRST_ATTEMPT_WAIT_MS: '1000', WEBHOOK_TIMEOUT_MS: '1000' });
  });

  it('its waiters go to their delivery workflows once no slot came back for an attempt time limit and the grace, and are delivered from there', async () => {
    const receiver = await startReceiver(suite, () => ({ status: 200 }));
    const user = await registerUser(h.app);
    const hook = await api(h.app, user).ok('POST', '/api/webhooks', { name: 'stopped', url: `${receiver.url}/hook` });
    const send = (i: number) => api(h.app, user).ok('POST', `/api/webhooks/${hook.id}/test`, { payload: { i } });
    const delivered = (n: number) =>
      waitFor(`${n} deliveries to succeed`, async () => {
        const { rows } = await h.db.query<{ id: string; status: string }>(`SELECT id, status FROM deliveries WHERE webhook_id = $1`, [hook.id]);
        return rows.filter((d) => d.status === 'succeeded').length === n && rows;
      }, 60_000);
    for (let i = 0; i < LIMIT; i++) await send(i);
    const earlier = await delivered(LIMIT);
    // Every slot held by a lease no attempt will give back (as a killed process leaves them, for a while).
    for (const [i, d] of earlier.entries()) {
      await h.db.query(`INSERT INTO delivery_slots (webhook_id, delivery_id, generation, holding, expires_at) VALUES ($1, $2, $3, true, now() + interval '10 minutes')`, [hook.id, d.id, 1_000 + i]);
    }

    const started = Date.now();
    await Promise.all([0, 1, 2].map((i) => send(LIMIT + i)));
    const ids = (await h.db.query<{ id: string }>(`SELECT id FROM deliveries WHERE webhook_id = $1 AND status = 'pending'`, [hook.id])).rows.map((r) => r.id);
    assert.equal(ids.length, 3);
    const handles = ids.map((id) => h.engine.client.workflow.getHandle(`delivery:${id}`));
    await waitFor('the waiters to go to their workflows', async () => (await Promise.all(handles.map((w) => w.describe().then(() => true, () => false)))).every(Boolean), 20_000);
    assert.ok(Date.now() - started >= 1_900, `they waited for the line first (${Date.now() - started} ms)`);
    assert.equal(receiver.requests.length, LIMIT, 'nothing more was sent while the line stood still');

    // The dead process's leases end; a slot given back wakes each workflow, as an attempt ending would.
    await h.db.query(`DELETE FROM delivery_slots WHERE webhook_id = $1 AND generation >= 1000`, [hook.id]);
    for (const w of handles) await w.signal(SLOT_FREED_SIGNAL);
    await delivered(LIMIT + 3);
    assert.equal(receiver.requests.length, LIMIT + 3);
  });
});
