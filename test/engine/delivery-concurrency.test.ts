import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createDeliveryActivities } from '../../activities/deliveries';
import type { Db } from '../../db/pool';
import { createDeliverySlotsRepository } from '../../db/repositories/deliveries';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';

const LIMIT = 2;
const DELIVERIES = 12;
const HOLD_MS = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * DELIVERY_CONCURRENCY_PER_WEBHOOK (docs/architecture.md § Limits and fairness): at most that many attempts in flight per webhook, so a
 * slow endpoint delays only its own deliveries; a delivery that finds no slot waits without using an
 * attempt, and is woken by the attempt that frees one.
 */
describe(`delivery concurrency per webhook (DELIVERY_CONCURRENCY_PER_WEBHOOK=${LIMIT})`, () => {
  const suite = suiteContext();
  let h: EngineHarness;

  before(async () => {
    h = await startEngine(suite, __filename, { DELIVERY_CONCURRENCY_PER_WEBHOOK: String(LIMIT), WEBHOOK_TIMEOUT_MS: '5000' });
  });

  it('a slow endpoint gets at most the limit at once, all of them in the end; another webhook is served meanwhile', async () => {
    const slow = await startReceiver(suite, () => ({ status: 200, delayMs: HOLD_MS }));
    const fast = await startReceiver(suite, () => ({ status: 200 }));
    const user = await registerUser(h.app);
    const slowHook = await api(h.app, user).ok('POST', '/api/webhooks', { name: 'slow', url: `${slow.url}/hook` });
    const other = await registerUser(h.app);
    const fastHook = await api(h.app, other).ok('POST', '/api/webhooks', { name: 'fast', url: `${fast.url}/hook` });

    for (let i = 0; i < DELIVERIES; i++) await api(h.app, user).ok('POST', `/api/webhooks/${slowHook.id}/test`, { payload: { i } });
    await waitFor('the slow endpoint to be busy', async () => slow.requests.length > 0, 20_000);
    await api(h.app, other).ok('POST', `/api/webhooks/${fastHook.id}/test`, {});

    await waitFor('the other webhook\'s delivery', async () => fast.requests.length === 1, 20_000);
    const slowDoneBefore = slow.requests.length;
    assert.ok(slowDoneBefore < DELIVERIES, `the other webhook waited for the slow one (${slowDoneBefore} of ${DELIVERIES} already sent)`);

    const list = await waitFor('every slow delivery to succeed', async () => {
      const items: { status: string; attempts: number }[] = await api(h.app, user).ok('GET', `/api/webhooks/${slowHook.id}/deliveries?limit=100`);
      return items.length === DELIVERIES && items.every((d) => d.status === 'succeeded') && items;
    }, 60_000);
    assert.equal(slow.requests.length, DELIVERIES);
    assert.ok(slow.load.maxInFlight <= LIMIT, `${slow.load.maxInFlight} requests in flight at once`);
    assert.equal(slow.load.maxInFlight, LIMIT, 'the slots were used');
    assert.ok(list.every((d) => d.attempts === 1), 'waiting for a slot used no attempt');
    // A slot is given back just after its attempt is recorded (engine/deliveries/attempts.ts), so the last one may still be going.
    await waitFor('every slot and place in line given back', async () => {
      const { rows } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM delivery_slots`);
      return rows[0]!.n === 0;
    }, 5_000);
  });

  it('a slot whose lease expired (its worker was killed) is free again; the line is served oldest first', async () => {
    const user = await registerUser(h.app);
    const hook = await api(h.app, user).ok('POST', '/api/webhooks', { name: 'nowhere', url: 'http://127.0.0.1:9/none' });
    // Rows of this test's own (no workflow attempts them): three deliveries of three events to one webhook.
    const { rows } = await h.db.query<{ id: string }>(
      `WITH e AS (INSERT INTO events (account_id, type, data) SELECT $2, 'webhook.test', '{}' FROM generate_series(1, 3) RETURNING id)
       INSERT INTO deliveries (account_id, webhook_id, event_id) SELECT $2, $1, e.id FROM e RETURNING id`,
      [hook.id, hook.accountId],
    );
    const [a, b, c] = rows.map((r) => ({ webhookId: hook.id, deliveryId: r.id, generation: 0 }));
    try {
      const slots = createDeliverySlotsRepository(h.db);
      const one = 1;
      assert.equal(await slots.acquire(a!, one, 300, 60_000), true, 'a free slot');
      assert.equal(await slots.acquire(b!, one, 300, 60_000), false, 'b waits');
      assert.equal(await slots.acquire(c!, one, 300, 60_000), false, 'c waits behind b');
      await sleep(400); // a's worker "died": its lease runs out, nobody releases it
      assert.equal(await slots.acquire(c!, one, 300, 60_000), false, 'c still waits behind b');
      assert.equal(await slots.acquire(b!, one, 60_000, 60_000), true, 'b takes the expired slot');
      assert.deepEqual(await slots.release(b!, one), [{ deliveryId: c!.deliveryId, generation: 0 }], 'releasing b names c, next in line');
      assert.equal(await slots.acquire(c!, one, 60_000, 60_000), true);
      await slots.release(c!, one);

      // Waiters whose workflows are gone (none was ever started for these rows) leave the line when told.
      assert.equal(await slots.acquire(a!, one, 60_000, 60_000), true);
      assert.equal(await slots.acquire(b!, one, 60_000, 60_000), false);
      assert.equal(await slots.acquire(c!, one, 60_000, 60_000), false);
      await createDeliveryActivities(h.activityDeps()).failDelivery({ deliveryId: a!.deliveryId, generation: 0, error: 'test' });
      const { rows: left } = await h.db.query(`SELECT delivery_id FROM delivery_slots WHERE webhook_id = $1`, [hook.id]);
      assert.deepEqual(left, []);
    } finally {
      await h.db.query(`DELETE FROM deliveries WHERE webhook_id = $1`, [hook.id]);
    }
  });
  it('a slot is taken and given back in one statement each, on a table kept without WAL (docs/adr/0012-fewer-round-trips-per-hook.md)', async () => {
    const user = await registerUser(h.app);
    const hook = await api(h.app, user).ok('POST', '/api/webhooks', { name: 'nowhere', url: 'http://127.0.0.1:9/none' });
    const { rows } = await h.db.query<{ id: string }>(
      `WITH e AS (INSERT INTO events (account_id, type, data) SELECT $2, 'webhook.test', '{}' FROM generate_series(1, 2) RETURNING id)
       INSERT INTO deliveries (account_id, webhook_id, event_id) SELECT $2, $1, e.id FROM e RETURNING id`,
      [hook.id, hook.accountId],
    );
    const [a, b] = rows.map((r) => ({ webhookId: hook.id, deliveryId: r.id, generation: 0 }));
    // Every statement the repository sends, through the pool or a connection it takes from it.
    let statements = 0;
    const counted = <T extends object>(target: T, more: (prop: string | symbol) => unknown = () => undefined): T =>
      new Proxy(target, {
        get(t, prop) {
          if (prop === 'query') {
            return (...args: unknown[]) => {
              statements++;
              return (t as unknown as { query: (...a: unknown[]) => unknown }).query(...args);
            };
          }
          const replaced = more(prop);
          if (replaced) return replaced;
          const value = Reflect.get(t, prop) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
        },
      });
    const db = counted(h.db, (prop) => (prop === 'connect' ? async () => counted(await h.db.connect()) : undefined));
    try {
      const slots = createDeliverySlotsRepository(db as Db);
      assert.equal(await slots.acquire(a!, 1, 60_000, 60_000), true);
      assert.equal(statements, 1, 'taking a free slot');
      assert.equal(await slots.acquire(b!, 1, 60_000, 60_000), false);
      assert.equal(statements, 2, 'waiting in line');
      assert.deepEqual(await slots.release(a!, 1), [{ deliveryId: b!.deliveryId, generation: 0 }]);
      assert.equal(statements, 3, 'giving it back, naming the next in line');
      const { rows: table } = await h.db.query(`SELECT relpersistence FROM pg_class WHERE relname = 'delivery_slots'`);
      assert.deepEqual(table, [{ relpersistence: 'u' }]);
    } finally {
      await h.db.query(`DELETE FROM deliveries WHERE webhook_id = $1`, [hook.id]);
    }
  });
});
