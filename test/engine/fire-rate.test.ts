import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowNotFoundError } from '@temporalio/client';
import { api } from '../helpers/api';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';

const PER_MINUTE = 3;

/**
 * FIRES_PER_MINUTE per account (docs/api.md § Rate limits), one counter shared by the API and the worker: over it, manual
 * and hook fires answer 429 with Retry-After before anything is queued; schedule and event fires are
 * recorded as `throttled` and not counted (no run, no event).
 */
describe(`fires per minute (FIRES_PER_MINUTE=${PER_MINUTE})`, () => {
  const suite = suiteContext();
  let h: EngineHarness;

  before(async () => {
    h = await startEngine(suite, __filename, { FIRES_PER_MINUTE: String(PER_MINUTE) });
  });

  const fireRows = async (triggerId: string) =>
    (await h.db.query(`SELECT id, source, status, reason, run_id FROM fires WHERE trigger_id = $1 ORDER BY created_at`, [triggerId])).rows;
  const queuedFires = async (triggerId: string) =>
    (await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE payload ->> 'workflowId' LIKE $1`, [`fire:${triggerId}:%`])).rows[0]!.n;

  /** Uses up the account's minute with manual fires of a fresh user trigger; returns its id. */
  async function spendTheMinute(u: TestUser): Promise<string> {
    const trigger = await api(h.app, u).ok('POST', '/api/user-triggers', { type: 'webhook', name: 'spender' });
    for (let i = 0; i < PER_MINUTE; i++) await api(h.app, u).ok('POST', `/api/user-triggers/${trigger.id}/fire`, {});
    return trigger.id;
  }

  it('answers 429 with Retry-After to manual and hook fires over the limit, queueing nothing', async () => {
    const user = await registerUser(h.app);
    const spender = await spendTheMinute(user);
    const hook = await api(h.app, user).ok('POST', '/api/user-triggers', { type: 'webhook', name: 'hook', configJson: { secretToken: 'a-secret-token-of-16+' } });
    await waitFor('the spent fires to be recorded', async () => (await fireRows(spender)).length === PER_MINUTE, 30_000);

    const manual = await api(h.app, user).post(`/api/user-triggers/${spender}/fire`, {});
    assert.equal(manual.statusCode, 429, manual.body);
    assert.deepEqual(Object.keys(manual.json()), ['message']);
    assert.match(manual.json().message, new RegExp(`at most ${PER_MINUTE} per minute`));
    const retryAfter = Number(manual.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${manual.headers['retry-after']}`);

    const path = `/api/hooks/triggers/${new URL(hook.hookUrl).pathname.split('/').pop()}`;
    const wrongToken = await api(h.app).post(path, {}, { 'x-trigger-token': 'not-the-token-at-all' });
    assert.equal(wrongToken.statusCode, 401, 'a caller without the token learns nothing about the rate');
    const hooked = await api(h.app).post(path, { x: 1 }, { 'x-trigger-token': 'a-secret-token-of-16+' });
    assert.equal(hooked.statusCode, 429, hooked.body);
    assert.ok(Number(hooked.headers['retry-after']) >= 1);

    // A 429 is not kept for its Idempotency-Key: the same request may be sent again after Retry-After.
    const keyed = await api(h.app, user).post(`/api/user-triggers/${spender}/fire`, {}, { 'idempotency-key': 'fire-later' });
    assert.equal(keyed.statusCode, 429);
    const { rows: kept } = await h.db.query(`SELECT 1 FROM idempotency_keys WHERE key = 'fire-later'`);
    assert.deepEqual(kept, []);

    assert.equal(await queuedFires(spender), 0);
    assert.equal(await queuedFires(hook.id), 0);
    assert.equal((await fireRows(spender)).length, PER_MINUTE);
    assert.deepEqual(await fireRows(hook.id), []);
    // Another account has its own minute.
    const other = await registerUser(h.app);
    const theirs = await api(h.app, other).ok('POST', '/api/user-triggers', { type: 'webhook', name: 'theirs' });
    assert.equal((await api(h.app, other).post(`/api/user-triggers/${theirs.id}/fire`, {})).statusCode, 202);
  });

  it('records an event fire over the limit as throttled: no run, no event, not counted', async () => {
    const user = await registerUser(h.app);
    const agent = await api(h.app, user).ok('POST', '/api/agents', { name: 'listener' });
    const incoming = await api(h.app, user).ok('POST', '/api/webhooks', { name: 'in', direction: 'incoming' });
    const listener = await api(h.app, user).ok('POST', `/api/agents/${agent.id}/triggers`, {
      type: 'event',
      name: 'on hook',
      configJson: { eventType: 'webhook.received' },
    });
    const paused = await api(h.app, user).ok('POST', '/api/agents', { name: 'paused listener', status: 'paused' });
    const pausedListener = await api(h.app, user).ok('POST', `/api/agents/${paused.id}/triggers`, {
      type: 'event',
      name: 'on hook, paused',
      configJson: { eventType: 'webhook.received' },
    });
    await spendTheMinute(user); // in the API

    const hooked = await api(h.app).post(`/api/hooks/webhooks/${incoming.id}`, { n: 1 });
    assert.equal(hooked.statusCode, 202, 'an incoming webhook call is not a fire');
    // The worker's fire sees the API's count.
    const [fire] = await waitFor('the event fire', async () => {
      const rows = await fireRows(listener.id);
      return rows.length > 0 && rows;
    }, 30_000);
    assert.deepEqual({ source: fire.source, status: fire.status, run_id: fire.run_id }, { source: 'event', status: 'throttled', run_id: null });
    // Recorded where the event's fan-out was written: no workflow of its own was queued or started.
    const { rows: [cause] } = await h.db.query(`SELECT event_id FROM fires WHERE id = $1`, [fire.id]);
    assert.equal(await queuedFires(listener.id), 0);
    await assert.rejects(h.engine.client.workflow.getHandle(`fire:${listener.id}:event-${cause.event_id}`).describe(), WorkflowNotFoundError);
    // A paused agent's fire is skipped before it could be throttled: left to its workflow, which says so.
    assert.equal((await h.db.query(`SELECT status FROM fires WHERE trigger_id = $1`, [pausedListener.id])).rows.length, 0);
    const [skipped] = await waitFor('the paused agent\'s fire', async () => {
      const rows = await fireRows(pausedListener.id);
      return rows.length > 0 && rows;
    }, 30_000);
    assert.equal(skipped.status, 'skipped');
    assert.equal(skipped.reason, 'agent_paused');

    const { rows: runs } = await h.db.query(`SELECT id FROM runs WHERE agent_id = $1`, [agent.id]);
    assert.deepEqual(runs, []);
    const { rows: events } = await h.db.query(`SELECT type FROM events WHERE data ->> 'fireId' = $1`, [fire.id]);
    assert.deepEqual(events, []);
    const shown = await api(h.app, user).ok('GET', `/api/triggers/${listener.id}`);
    assert.equal(shown.fireCount, 0);
    const [listed] = await api(h.app, user).ok('GET', `/api/triggers/${listener.id}/fires`);
    assert.deepEqual({ id: listed.id, status: listed.status, reason: listed.reason, runId: listed.runId }, { id: fire.id, status: 'throttled', reason: 'fires_per_minute', runId: null });
    const one = await api(h.app, user).ok('GET', `/api/triggers/${listener.id}/fires/${fire.id}`);
    assert.equal(one.status, 'throttled', 'the fire on its own says what the list says');
    assert.equal(one.reason, 'fires_per_minute');
  });

  it('an event fire over the limit whose trigger is locked (being fired) is not waited for: its workflow records it', async () => {
    const user = await registerUser(h.app);
    const incoming = await api(h.app, user).ok('POST', '/api/webhooks', { name: 'in', direction: 'incoming' });
    const listener = await api(h.app, user).ok('POST', '/api/user-triggers', { type: 'event', name: 'on hook', configJson: { eventType: 'webhook.received' } });
    await spendTheMinute(user);
    // As a fire of this trigger holds it (recordFire locks it, then waits for the account's window).
    const holder = await h.db.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM triggers WHERE id = $1 FOR UPDATE', [listener.id]);
      const hooked = await Promise.race([api(h.app).post(`/api/hooks/webhooks/${incoming.id}`, { n: 2 }), sleep(5_000).then(() => null)]);
      assert.ok(hooked, 'the hook waited 5 s for the locked trigger');
      assert.equal(hooked.statusCode, 202, hooked.body);
      assert.deepEqual(await fireRows(listener.id), [], 'not recorded while the trigger is held');
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const [fire] = await waitFor('the event fire, from its workflow', async () => {
      const rows = await fireRows(listener.id);
      return rows.length > 0 && rows;
    }, 30_000);
    assert.equal(fire.status, 'throttled');
    const { rows: [cause] } = await h.db.query(`SELECT event_id FROM fires WHERE id = $1`, [fire.id]);
    assert.ok(await h.engine.client.workflow.getHandle(`fire:${listener.id}:event-${cause.event_id}`).describe(), 'its workflow recorded it');
  });

  it('records schedule fires over the limit as throttled, uncounted; the worker\'s count holds for the API too', async () => {
    const user = await registerUser(h.app);
    const cron = await api(h.app, user).ok('POST', '/api/user-triggers', { type: 'cron', name: 'every second', configJson: { cronExpression: '* * * * * *' } });
    const rows = await waitFor('the limit and two throttled schedule fires', async () => {
      const r = await fireRows(cron.id);
      return r.filter((f) => f.status === 'throttled').length >= 2 && r;
    }, 30_000);
    await api(h.app, user).ok('PATCH', `/api/user-triggers/${cron.id}`, { enabled: false });

    assert.ok(rows.every((f) => f.source === 'schedule'));
    assert.deepEqual(
      rows.slice(0, PER_MINUTE + 2).map((f) => f.status),
      [...Array(PER_MINUTE).fill('fired'), 'throttled', 'throttled'],
    );
    assert.equal((await api(h.app, user).ok('GET', `/api/user-triggers/${cron.id}`)).fireCount, PER_MINUTE);
    const history = await api(h.app, user).ok('GET', `/api/user-triggers/${cron.id}/fires?limit=200`);
    assert.ok(history.some((f: { status: string }) => f.status === 'throttled'));
    for (const f of history as { status: string; reason: string | null }[]) {
      assert.equal(f.reason, f.status === 'throttled' ? 'fires_per_minute' : null, `a ${f.status} schedule fire's reason`);
    }
    // The worker's count holds for the API too.
    const manual = await api(h.app, user).ok('POST', '/api/user-triggers', { type: 'webhook', name: 'manual' });
    assert.equal((await api(h.app, user).post(`/api/user-triggers/${manual.id}/fire`, {})).statusCode, 429);
  });
});
