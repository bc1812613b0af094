import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createEventMatchingActivities } from '../../activities/event-matching';
import { withTransaction } from '../../db/pool';
import { createEventsRepository } from '../../db/repositories/events';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';

const BUDGET = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Chains are bounded in width (docs/architecture.md § Limits and fairness): one root event causes at most CHAIN_FIRE_BUDGET fires.
 * Without the budget the two-agent example below makes 2,047 runs (1, 2, 4 … 1,024 per depth).
 */
describe(`chain fire budget (CHAIN_FIRE_BUDGET=${BUDGET})`, () => {
  const suite = suiteContext();
  let h: EngineHarness;

  before(async () => {
    h = await startEngine(suite, __filename, { CHAIN_FIRE_BUDGET: String(BUDGET) });
  });

  async function eventFires(accountId: string): Promise<number> {
    const { rows } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fires WHERE account_id = $1 AND source = 'event'`, [accountId]);
    return rows[0]!.n;
  }

  /**
   * Waits until the account's chain has stopped: no fire, run or event of the account is on its way and
   * the count of event fires stayed the same for a while. Fails as soon as the count passes `limit`.
   */
  async function settledFires(accountId: string, limit: number): Promise<number> {
    const deadline = Date.now() + 60_000;
    let last = -1;
    let stableSince = Date.now();
    for (;;) {
      const n = await eventFires(accountId);
      assert.ok(n <= limit, `${n} fires: the chain went past its budget of ${limit}`);
      const { rows } = await h.db.query<{ busy: number }>(
        `SELECT (SELECT count(*) FROM runs WHERE account_id = $1 AND status IN ('queued', 'running'))
              + (SELECT count(*) FROM outbox)
              + (SELECT count(*) FROM events WHERE account_id = $1 AND dispatch_status IS NULL) AS busy`,
        [accountId],
      );
      if (n !== last || Number(rows[0]!.busy) > 0) stableSince = Date.now();
      last = n;
      if (Date.now() - stableSince > 2_000) return n;
      assert.ok(Date.now() < deadline, `the chain did not settle: ${n} fires`);
      await sleep(250);
    }
  }

  it('two agents finishing into each other: exactly the budget of fires, then nothing', async () => {
    const user = await registerUser(h.app);
    const agents: string[] = [];
    for (const name of ['A', 'B']) {
      const agent = await api(h.app, user).ok('POST', '/api/agents', { name });
      agents.push(agent.id);
      // The default empty filter: every agent.completed of the account fires it.
      await api(h.app, user).ok('POST', `/api/agents/${agent.id}/triggers`, { type: 'agent_finished', name: `${name} on any finish` });
    }
    const { accountId } = await api(h.app, user).ok('GET', `/api/agents/${agents[0]}`);

    const run = await api(h.app, user).ok('POST', `/api/agents/${agents[0]}/runs`, { input: { go: 1 } });
    assert.equal(await settledFires(accountId, BUDGET), BUDGET);

    const { rows: runs } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE account_id = $1`, [accountId]);
    assert.equal(runs[0]!.n, BUDGET + 1, 'the API run and one run per fire');
    // Every fire counted against the root: the event of the API run's completion.
    const { rows: roots } = await h.db.query<{ root: string; n: number }>(
      `SELECT root_event_id AS root, count(*)::int AS n FROM fires WHERE account_id = $1 GROUP BY 1`,
      [accountId],
    );
    const { rows: first } = await h.db.query<{ id: string; chain_fires: number }>(
      `SELECT id, chain_fires FROM events WHERE type = 'agent.completed' AND data ->> 'runId' = $1`,
      [run.id],
    );
    assert.deepEqual(roots, [{ root: first[0]!.id, n: BUDGET }]);
    assert.equal(first[0]!.chain_fires, BUDGET);
    // The events past the budget say so.
    const { rows: over } = await h.db.query<{ n: number }>(
      `SELECT coalesce(sum((dispatch_result ->> 'overBudget')::int), 0)::int AS n FROM events WHERE account_id = $1`,
      [accountId],
    );
    assert.ok(over[0]!.n > 0, 'matching triggers beyond the budget were counted as not fired');
  });

  it('four event triggers on trigger.fired and one manual fire: the budget, not 1.4 million', async () => {
    const user = await registerUser(h.app);
    for (let i = 0; i < 4; i++) {
      await api(h.app, user).ok('POST', '/api/user-triggers', { type: 'event', name: `echo ${i}`, configJson: { eventType: 'trigger.fired' } });
    }
    const start = await api(h.app, user).ok('POST', '/api/user-triggers', { type: 'webhook', name: 'start' });
    const { fireId } = await api(h.app, user).ok('POST', `/api/user-triggers/${start.id}/fire`, {});

    assert.equal(await settledFires(start.accountId, BUDGET), BUDGET);
    // The manual fire roots the chain at the event it emitted.
    const { rows } = await h.db.query<{ root_event_id: string }>(`SELECT root_event_id FROM fires WHERE id = $1`, [fireId]);
    const { rows: chained } = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM fires WHERE account_id = $1 AND source = 'event' AND root_event_id = $2`,
      [start.accountId, rows[0]!.root_event_id],
    );
    assert.equal(chained[0]!.n, BUDGET);
  });

  it('concurrent fan-outs of one chain never take more than the budget together', async () => {
    const user = await registerUser(h.app);
    const listeners = [];
    for (let i = 0; i < 3; i++) {
      listeners.push(await api(h.app, user).ok('POST', '/api/user-triggers', { type: 'event', name: `l${i}`, configJson: { eventType: 'webhook.received' } }));
    }
    const accountId = listeners[0].accountId as string;
    // A root and eight events of its chain, each matching all three triggers: 24 fires wanted, 5 allowed.
    const writer = createEventsRepository(h.db);
    const [root, ...events] = await withTransaction(h.db, async (tx) => {
      const root = await writer.insertEvent({ accountId, type: 'agent.updated', data: {} }, tx);
      const chain = [root];
      for (let i = 0; i < 8; i++) {
        chain.push(await writer.insertEvent({ accountId, type: 'webhook.received', data: { i }, chainDepth: 1, rootEventId: root.id }, tx));
      }
      return chain;
    });
    const { matchEvent } = createEventMatchingActivities(h.activityDeps());
    await matchEvent({ eventId: root!.id }); // nothing listens to it
    const results = await Promise.all(events.map((e) => matchEvent({ eventId: e.id })));

    assert.equal(results.reduce((sum, r) => sum + r.fires, 0), BUDGET);
    assert.equal(results.reduce((sum, r) => sum + r.overBudget, 0), 3 * 8 - BUDGET);
    // A fan-out repeated after its commit (a retried activity) makes nothing again.
    assert.deepEqual(await matchEvent({ eventId: events[0]!.id }), results[0]);
    assert.equal(await settledFires(accountId, BUDGET), BUDGET);
  });
});
