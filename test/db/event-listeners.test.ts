import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { withTransaction } from '../../db/pool';
import { createEventsRepository, NOTHING_LISTENS, type NewEvent } from '../../db/repositories/events';
import { createEventFanOut } from '../../engine/events/fan-out';
import { MAX_CHAIN_DEPTH } from '../../engine/contract';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type StartedApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

/**
 * An event nothing listens for is settled in the statement that writes it (db/repositories/events.ts
 * EventsRepository.insertEvent): written with its fan-out done, so its writer asks nothing more. Anything that listens —
 * a subscribed enabled webhook, the target of a webhook.test, a trigger on its type below the chain's
 * depth limit — leaves it to the fan-out, which then writes exactly what it wrote before.
 */
describe('events nothing listens for', () => {
  const suite = suiteContext();
  let s: StartedApp;
  let user: TestUser;
  let accountId: string;
  let agentId: string;

  before(async () => {
    s = await startTestApp(suite);
    user = await registerUser(s.app);
    const agent = await api(s.app, user).ok('POST', '/api/agents', { name: 'listener' });
    agentId = agent.id;
    accountId = agent.accountId;
  });

  /** Writes and fans out one event of the account; what EventsRepository.insertEvent said, the fan-out's outcome and the row. */
  async function emit(e: Omit<NewEvent, 'accountId'>) {
    const fanOut = createEventFanOut(s.db, s.config);
    const { settled, outcome, queued, id } = await withTransaction(s.db, async (tx) => {
      const event = await createEventsRepository(s.db).insertEvent({ accountId, ...e }, tx);
      const { deferred, held, queued, ...outcome } = await fanOut.fanOutEvent(tx, event, { agentId });
      assert.equal(deferred, false);
      assert.deepEqual(held, []);
      return { settled: event.settled, outcome, queued, id: event.id };
    });
    const { rows } = await s.db.query<{ dispatch_status: string | null; dispatch_result: unknown; deliveries: number; fires: number }>(
      `SELECT dispatch_status, dispatch_result,
              (SELECT count(*)::int FROM deliveries WHERE event_id = e.id) AS deliveries,
              (SELECT count(*)::int FROM fires f WHERE f.root_event_id = e.id) AS fires
       FROM events e WHERE id = $1`,
      [id],
    );
    return { settled, outcome, queued, row: rows[0]! };
  }

  it('nothing listening: written done, with the fan-out of nothing', async () => {
    const { settled, outcome, queued, row } = await emit({ type: 'agent.updated', data: { n: 1 } });
    assert.equal(settled, true);
    assert.deepEqual(outcome, NOTHING_LISTENS);
    assert.equal(queued, false, 'nothing for the hand-off');
    assert.equal(row.dispatch_status, 'done');
    assert.deepEqual(row.dispatch_result, NOTHING_LISTENS);
    assert.equal(row.deliveries, 0);
  });

  it('a webhook subscribed to the type, and one to every type, each make the event a fan-out of its own', async () => {
    const typed = await api(s.app, user).ok('POST', '/api/webhooks', { name: 'typed', url: 'http://127.0.0.1:9/typed', events: ['agent.deleted'] });
    const first = await emit({ type: 'agent.deleted', data: {} });
    assert.equal(first.settled, false);
    assert.equal(first.row.dispatch_status, 'done');
    assert.deepEqual(first.outcome, { ...NOTHING_LISTENS, deliveries: 1 });
    assert.equal(first.queued, true, 'its delivery for the hand-off');
    assert.equal(first.row.deliveries, 1);
    // Another type than the one subscribed to: nothing listens.
    assert.equal((await emit({ type: 'agent.created', data: {} })).settled, true);
    // Disabled: nothing listens.
    await api(s.app, user).ok('PATCH', `/api/webhooks/${typed.id}`, { enabled: false });
    assert.equal((await emit({ type: 'agent.deleted', data: {} })).settled, true);

    const all = await api(s.app, user).ok('POST', '/api/webhooks', { name: 'all', url: 'http://127.0.0.1:9/all', events: ['*'] });
    const second = await emit({ type: 'agent.created', data: {} });
    assert.equal(second.settled, false);
    assert.equal(second.row.deliveries, 1);
    await api(s.app, user).ok('PATCH', `/api/webhooks/${all.id}`, { enabled: false });
  });

  it("a webhook.test's target webhook listens, whatever it is subscribed to", async () => {
    const target = await api(s.app, user).ok('POST', '/api/webhooks', { name: 'target', url: 'http://127.0.0.1:9/target', events: ['agent.created'] });
    const { settled, row } = await emit({ type: 'webhook.test', data: {}, targetWebhookId: target.id });
    assert.equal(settled, false);
    assert.equal(row.deliveries, 1);
    await api(s.app, user).ok('PATCH', `/api/webhooks/${target.id}`, { enabled: false });
  });

  it('a trigger on the type listens below the chain depth limit, not at it', async () => {
    await api(s.app, user).ok('POST', '/api/user-triggers', { type: 'event', name: 'on agent.updated', configJson: { eventType: 'agent.updated' } });
    const below = await emit({ type: 'agent.updated', data: {}, chainDepth: MAX_CHAIN_DEPTH - 1 });
    assert.equal(below.settled, false);
    assert.equal(below.outcome.fires, 1);
    assert.equal(below.queued, true, 'its fire for the hand-off');
    const at = await emit({ type: 'agent.updated', data: {}, chainDepth: MAX_CHAIN_DEPTH });
    assert.equal(at.settled, true);
    assert.deepEqual(at.outcome, NOTHING_LISTENS);
    assert.equal(at.queued, false);
    // Another account's listener is not this account's.
    const other = await registerUser(s.app);
    await api(s.app, other).ok('POST', '/api/user-triggers', { type: 'event', name: 'theirs', configJson: { eventType: 'agent.deleted' } });
    assert.equal((await emit({ type: 'agent.deleted', data: {} })).settled, true);
  });
});
