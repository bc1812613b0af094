import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { api, type ApiResponse } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

/**
 * Manual retries and recoveries are rate limited per webhook (docs/api.md § Rate limits): a caller looping
 * on them must not turn the platform into an amplifier aimed at someone's endpoint. Two API instances share
 * one database, as behind a load balancer; no worker runs here, so nothing is sent and every recovery stays
 * `running` until the test says otherwise.
 */
const RETRIES_PER_MINUTE = 5;

describe('retry and recover rate limits', () => {
  const suite = suiteContext();
  let a: TestApp;
  let b: TestApp;
  let db: Db;
  let owner: TestUser;

  before(async () => {
    const first = await startTestApp(suite, { DELIVERY_RETRIES_PER_MINUTE: String(RETRIES_PER_MINUTE) });
    ({ app: a, db } = first);
    ({ app: b } = await startTestApp(suite, { DELIVERY_RETRIES_PER_MINUTE: String(RETRIES_PER_MINUTE) }, first.database));
    owner = await registerUser(a);
  });

  async function webhook(name: string): Promise<string> {
    return (await api(a, owner).ok('POST', '/api/webhooks', { name, url: 'http://127.0.0.1:9/hook', events: ['*'] })).id;
  }

  /** A delivery of the webhook: its test event's. */
  async function delivery(webhookId: string): Promise<string> {
    const { eventId } = await api(a, owner).ok('POST', `/api/webhooks/${webhookId}/test`);
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM deliveries WHERE event_id = $1`, [eventId]);
    return rows[0]!.id;
  }

  function assertLimited(res: ApiResponse, what: RegExp): number {
    assert.equal(res.statusCode, 429, res.body);
    assert.deepEqual(Object.keys(res.json()), ['message']);
    assert.match(res.json().message, what);
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${res.headers['retry-after']}`);
    return retryAfter;
  }

  it(`manual retries: ${RETRIES_PER_MINUTE} a minute per webhook across API instances, then 429 with Retry-After, nothing written or started`, async () => {
    const hook = await webhook('victim');
    const deliveryId = await delivery(hook);
    const generation = async () => (await db.query<{ generation: number }>(`SELECT generation FROM deliveries WHERE id = $1`, [deliveryId])).rows[0]!.generation;
    const audited = async () =>
      (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'delivery.retry' AND resource_id = $1`, [deliveryId])).rows[0]!.n;
    const before = await generation();

    // 12 at once, half through each instance.
    const url = `/api/webhooks/${hook}/deliveries/${deliveryId}/retry`;
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => api(i % 2 ? b : a, owner).post(url)));
    const statuses = answers.map((r) => r.statusCode).sort();
    console.log(`12 concurrent retries: ${statuses.join(' ')}`);
    assert.deepEqual(statuses, [...Array(RETRIES_PER_MINUTE).fill(202), ...Array(12 - RETRIES_PER_MINUTE).fill(429)]);
    for (const res of answers.filter((r) => r.statusCode === 429)) {
      assert.ok(assertLimited(res, /at most 5 manual retries a minute per webhook \(DELIVERY_RETRIES_PER_MINUTE\)/) <= 60);
    }
    assert.equal(await generation(), before + RETRIES_PER_MINUTE, 'one new generation (and workflow start) per accepted retry, none per refused one');
    assert.equal(await audited(), RETRIES_PER_MINUTE);

    // A refusal says when to ask again, so it is not kept for an Idempotency-Key.
    const keyed = await api(b, owner).post(url, undefined, { 'idempotency-key': 'retry-once-more' });
    assertLimited(keyed, /DELIVERY_RETRIES_PER_MINUTE/);
    const again = await api(a, owner).post(url, undefined, { 'idempotency-key': 'retry-once-more' });
    assertLimited(again, /DELIVERY_RETRIES_PER_MINUTE/);
    assert.equal(again.headers['idempotent-replayed'], undefined);

    // Another webhook has its own count; a refused retry of a missing delivery spends none.
    const other = await webhook('other');
    const otherDelivery = await delivery(other);
    for (let i = 0; i < 3; i++) assert.equal((await api(a, owner).post(`/api/webhooks/${other}/deliveries/00000000-0000-4000-8000-00000000000${i}/retry`)).statusCode, 404);
    for (let i = 0; i < RETRIES_PER_MINUTE; i++) assert.equal((await api(b, owner).post(`/api/webhooks/${other}/deliveries/${otherDelivery}/retry`)).statusCode, 202);
    assertLimited(await api(a, owner).post(`/api/webhooks/${other}/deliveries/${otherDelivery}/retry`), /DELIVERY_RETRIES_PER_MINUTE/);
  });

  it('recover: one per RECOVER_INTERVAL (1 min) per webhook across API instances; 429 with Retry-After, nothing written; then accepted again', async () => {
    const hook = await webhook('looped');
    const url = `/api/webhooks/${hook}/recover`;
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const count = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM delivery_recoveries WHERE webhook_id = $1`, [hook])).rows[0]!.n;

    // Concurrent requests through both instances: one recovery.
    const first = await Promise.all(Array.from({ length: 6 }, (_, i) => api(i % 2 ? b : a, owner).post(url, { since })));
    assert.deepEqual(first.map((r) => r.statusCode).filter((s) => s === 202), [202], first.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
    assert.equal(await count(), 1);

    // Its worker finished it in a moment (an empty window does): the next request is still refused.
    await db.query(`UPDATE delivery_recoveries SET status = 'completed', completed_at = now() WHERE webhook_id = $1`, [hook]);
    const looped = await Promise.all(Array.from({ length: 6 }, (_, i) => api(i % 2 ? b : a, owner).post(url, { since }, i === 0 ? { 'idempotency-key': 'recover-loop' } : {})));
    for (const res of looped) {
      const retryAfter = assertLimited(res, /at most one recovery per webhook every 1m \(RECOVER_INTERVAL\)/);
      assert.ok(retryAfter <= 60, `Retry-After ${retryAfter}`);
    }
    assert.equal(await count(), 1, 'nothing written by a refused request');

    // Once the interval has passed (the first was asked for over a minute ago), accepted: the same key asks again.
    await db.query(`UPDATE delivery_recoveries SET created_at = created_at - interval '61 seconds' WHERE webhook_id = $1`, [hook]);
    const later = await api(b, owner).post(url, { since }, { 'idempotency-key': 'recover-loop' });
    assert.equal(later.statusCode, 202, later.body);
    assert.equal(later.headers['idempotent-replayed'], undefined);
    assert.equal(await count(), 2);
    // Another webhook is not held up by this one's interval.
    assert.equal((await api(a, owner).post(`/api/webhooks/${await webhook('next door')}/recover`, { since })).statusCode, 202);
  });
});
