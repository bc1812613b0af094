import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import { createDispatchActivities, FANOUT_WORK_UNITS } from '../../activities/dispatch';
import { insertEvent } from '../../db/repositories/events';
import { REGEX_WORK_BUDGET } from '../../lib/event-filter';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';

const HOSTILE_EVENTS = 5;

/**
 * One account's filter can't stop the engine for the others (docs/architecture.md § Limits and fairness). With JavaScript's backtracking
 * RegExp, `.*.*.*.*!` against 5,000 characters without a `!` never finishes: the worker's event loop
 * froze (this process with it) and every restarted worker froze again on the same event. Matched in
 * linear time, outside any transaction, the hostile events are dispatched and another account's fire
 * and delivery go through.
 */
describe('a hostile $regex filter does not stop the engine', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let base: string;

  before(async () => {
    h = await startEngine(suite, __filename);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  });

  it('another account\'s manual fire and its delivery are served while the hostile events are dispatched', async () => {
    const attacker = await registerUser(h.app);
    const hook = await api(h.app, attacker).ok('POST', '/api/webhooks', { name: 'public', direction: 'incoming' });
    const trap = await api(h.app, attacker).ok('POST', '/api/user-triggers', {
      type: 'event',
      name: 'catastrophic backtracking',
      configJson: { eventType: 'webhook.received', eventFilter: { 'payload.s': { $regex: '.*.*.*.*!' } } },
    });

    const victim = await registerUser(h.app);
    const rx = await startReceiver(suite);
    await api(h.app, victim).ok('POST', '/api/webhooks', { name: 'mine', url: `${rx.url}/hook`, events: ['trigger.fired'] });
    const mine = await api(h.app, victim).ok('POST', '/api/user-triggers', { type: 'webhook', name: 'mine' });

    // The hostile requests first, with no credential: anyone can send them.
    const hostileIds: string[] = [];
    for (let i = 0; i < HOSTILE_EVENTS; i++) {
      const res = await api(base).post(`/api/hooks/webhooks/${hook.id}`, { s: 'a'.repeat(5000) });
      assert.equal(res.statusCode, 202);
      hostileIds.push(res.json<{ id: string }>().id);
    }
    const { fireId } = await api(h.app, victim).ok('POST', `/api/user-triggers/${mine.id}/fire`, { payload: { ok: true } });

    // The victim's fire is recorded and its event delivered to its webhook...
    const fire = await waitFor('the victim\'s fire', async () => (await h.db.query(`SELECT status FROM fires WHERE id = $1`, [fireId])).rows[0], 30_000);
    assert.equal(fire.status, 'fired');
    await waitFor('the victim\'s delivery', async () => rx.requests.some((r) => JSON.parse(r.body).data.fireId === fireId), 30_000);
    // ...and every hostile event was dispatched (no match: no '!'), none left hanging or retried for ever.
    const dispatched = await waitFor('the hostile events to be dispatched', async () => {
      const { rows } = await h.db.query<{ dispatch_status: string | null; dispatch_result: { fires: number } | null }>(
        `SELECT dispatch_status, dispatch_result FROM events WHERE id = ANY($1)`,
        [hostileIds],
      );
      return rows.length === HOSTILE_EVENTS && rows.every((r) => r.dispatch_status !== null) && rows;
    }, 30_000);
    assert.ok(dispatched.every((r) => r.dispatch_status === 'done' && r.dispatch_result!.fires === 0));
    const { rows: fires } = await h.db.query(`SELECT id FROM fires WHERE trigger_id = $1`, [trap.id]);
    assert.deepEqual(fires, []);
  });

  it('an event\'s filters are matched within a work budget; the ones beyond it are counted as unevaluated', async () => {
    const user = await registerUser(h.app);
    const perFilter = REGEX_WORK_BUDGET; // a one-condition filter looks at up to this many units of a long value
    const affordable = Math.ceil(FANOUT_WORK_UNITS / perFilter); // give or take one (the budget may overshoot by a filter)
    const listening = affordable + 10;
    let accountId = '';
    for (let i = 0; i < listening; i++) {
      const trigger = await api(h.app, user).ok('POST', '/api/user-triggers', {
        type: 'event',
        name: `costly ${i}`,
        configJson: { eventType: 'webhook.received', eventFilter: { 'payload.s': { $regex: 'never' } } },
      });
      accountId = trigger.accountId;
    }
    const event = await insertEvent(h.db, { accountId, type: 'webhook.received', data: { payload: { s: 'n'.repeat(100_000) } } });
    const result = await createDispatchActivities(h.activityDeps()).fanOutEvent({ eventId: event.id });
    assert.equal(result.fires, 0);
    assert.ok(Math.abs(result.unevaluated - 10) <= 2, `${result.unevaluated} of ${listening} unevaluated`);
  });
});
