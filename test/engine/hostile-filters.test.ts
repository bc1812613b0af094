import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import { createEventMatchingActivities } from '../../activities/event-matching';
import { FANOUT_WORK_UNITS } from '../../engine/events/fan-out';
import { createEventsRepository } from '../../db/repositories/events';
import { MAX_PROGRAM_SIZE } from '../../lib/re2-cache';
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

  it("fires on `.*.*.*.*!` over 5,000 a then '!' (a value it used to cut before the '!'), and a match at the end of a 1 MiB hook body", async () => {
    const user = await registerUser(h.app);
    const hook = await api(h.app, user).ok('POST', '/api/webhooks', { name: 'public', direction: 'incoming' });
    const listener = await api(h.app, user).ok('POST', '/api/user-triggers', {
      type: 'event',
      name: 'shouting',
      configJson: { eventType: 'webhook.received', eventFilter: { 'payload.text': { $regex: '.*.*.*.*!' } } },
    });
    // Filters used to look at 50 000 / 11 = 4 545 characters of this value and never see the '!'.
    const example = await api(base).post(`/api/hooks/webhooks/${hook.id}`, { text: 'a'.repeat(5000) + '!' });
    assert.equal(example.statusCode, 202, example.body);
    // The largest body a hook takes: the '!' is its value's last character.
    const body = JSON.stringify({ text: '' });
    const longest = 'a'.repeat(1024 * 1024 - Buffer.byteLength(body) - 1) + '!';
    const large = await api(base).post(`/api/hooks/webhooks/${hook.id}`, { text: longest });
    assert.equal(large.statusCode, 202, large.body);
    const quiet = await api(base).post(`/api/hooks/webhooks/${hook.id}`, { text: longest.slice(0, -1) + 'a' });
    assert.equal(quiet.statusCode, 202, quiet.body);

    const fires = await waitFor('two fires', async () => {
      const { rows } = await h.db.query<{ status: string; reason: string | null; event_id: string }>(`SELECT status, reason, event_id FROM fires WHERE trigger_id = $1`, [listener.id]);
      return rows.length >= 2 && rows;
    }, 60_000);
    const events = [example, large].map((r) => r.json<{ id: string }>().id);
    assert.deepEqual(new Set(fires.map((f) => f.event_id)), new Set(events), 'the two values ending in ! fired, the third did not');
    assert.ok(fires.every((f) => f.status === 'fired' && f.reason === null));
    const last = await waitFor('the third event dispatched', async () => {
      const { rows } = await h.db.query(`SELECT dispatch_status, dispatch_result FROM events WHERE id = $1`, [quiet.json<{ id: string }>().id]);
      return rows[0]?.dispatch_status === 'done' && rows[0];
    }, 60_000);
    assert.deepEqual({ fires: last.dispatch_result.fires, unevaluated: last.dispatch_result.unevaluated }, { fires: 0, unevaluated: 0 });
    assert.equal((await api(h.app, user).ok('GET', `/api/user-triggers/${listener.id}`)).fireCount, 2);
  });

  it("an event's filters are started within its work budget, each matched in full; the ones after it get a skipped fire, reason filter_budget", async () => {
    const user = await registerUser(h.app);
    const agent = await api(h.app, user).ok('POST', '/api/agents', { name: 'listener' });
    // The largest program on a 1 MiB value spends the whole budget at once.
    const pattern = `[a-z]{${MAX_PROGRAM_SIZE - 2}}`;
    const value = 'N'.repeat(1024 * 1024);
    assert.ok(value.length * MAX_PROGRAM_SIZE >= FANOUT_WORK_UNITS);
    const triggers = [];
    for (let i = 0; i < 3; i++) {
      triggers.push(
        await api(h.app, user).ok('POST', `/api/agents/${agent.id}/triggers`, {
          type: 'event',
          name: `costly ${i}`,
          configJson: { eventType: 'webhook.received', eventFilter: { 'payload.s': { $regex: pattern } } },
        }),
      );
    }
    const event = await createEventsRepository(h.db).insertEvent({ accountId: agent.accountId, type: 'webhook.received', data: { payload: { s: value } } });
    const result = await createEventMatchingActivities(h.activityDeps()).matchEvent({ eventId: event.id });
    assert.deepEqual({ fires: result.fires, unevaluated: result.unevaluated }, { fires: 0, unevaluated: 2 });

    const { rows } = await h.db.query<{ trigger_id: string; status: string; reason: string; run_id: string | null }>(
      `SELECT trigger_id, status, reason, run_id FROM fires WHERE event_id = $1`,
      [event.id],
    );
    assert.deepEqual(
      rows.map((r) => [r.trigger_id, r.status, r.reason, r.run_id]).sort(),
      triggers.slice(1).map((t) => [t.id, 'skipped', 'filter_budget', null]).sort(),
      'the first filter was evaluated (no match); the two after it were not, and say so',
    );
    const [listed] = await api(h.app, user).ok('GET', `/api/triggers/${triggers[1].id}/fires`);
    assert.deepEqual({ status: listed.status, reason: listed.reason, runId: listed.runId }, { status: 'skipped', reason: 'filter_budget', runId: null });
    assert.equal((await api(h.app, user).ok('GET', `/api/triggers/${triggers[1].id}`)).fireCount, 0);
    const { rows: runs } = await h.db.query(`SELECT id FROM runs WHERE agent_id = $1`, [agent.id]);
    assert.deepEqual(runs, []);
    // Asked again (a retried activity), nothing is recorded twice.
    await createEventMatchingActivities(h.activityDeps()).matchEvent({ eventId: event.id });
    assert.equal((await h.db.query(`SELECT id FROM fires WHERE event_id = $1`, [event.id])).rows.length, 2);
  });
});
