import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPace, createTurns, QUEUE_PLACE_MS, runLineLimits } from '../../engine/runs/run-line';

let n = 0;
const account = () => `account-${++n}`;

/** The rules of an account's line of runs (engine/runs/run-line.ts) that need no database. */
describe('run line: rules', () => {
  it("a running run holds its slot at most RUN_TIMEOUT_MS plus a queued run's place", () => {
    const limits = runLineLimits({ runs: { concurrencyPerAccount: 3, timeoutMs: 10_000 } } as Parameters<typeof runLineLimits>[0]);
    assert.deepEqual(limits, { limit: 3, placeMs: QUEUE_PLACE_MS, holdMs: 10_000 + QUEUE_PLACE_MS, timeoutMs: 10_000 });
  });

  it('the backlog pace allows up to the concurrency at once, then refills at its rate per second', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    const pace = createPace(2, 4); // RUN_BACKLOG_PER_SECOND 2, RUN_CONCURRENCY_PER_ACCOUNT 4
    const a = account();
    assert.equal(pace.allows(a, 10), 4, 'a full bucket: the concurrency');
    assert.equal(pace.allows(a, 3), 3, 'never more than wanted');
    pace.took(a, 4);
    assert.equal(pace.allows(a, 10), 0);
    assert.equal(pace.waitMs(a), 500, 'one more after 1/2 s');
    t.mock.timers.tick(499);
    assert.equal(pace.allows(a, 10), 0);
    t.mock.timers.tick(1);
    assert.equal(pace.allows(a, 10), 1);
    t.mock.timers.tick(60_000);
    assert.equal(pace.allows(a, 10), 4, 'refilled up to the concurrency, no more');
    assert.equal(pace.allows(account(), 10), 4, "another account's bucket is its own");
  });

  it('the pace is its run line\'s own (a process composes one run line: engine/compose.ts)', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 2_000_000 });
    const a = account();
    const pace = createPace(1, 2);
    pace.took(a, 2);
    assert.equal(pace.allows(a, 2), 0);
    assert.ok(pace.waitMs(a) >= 1);
    assert.equal(createPace(1, 2).allows(a, 2), 2, 'no state shared through the module');
  });

  it("one key's calls take turns in the order they came; other keys are not held up", async () => {
    const inTurn = createTurns();
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = inTurn('a', async () => {
      order.push('a1 start');
      await gate;
      order.push('a1 end');
      return 1;
    });
    const second = inTurn('a', async () => {
      order.push('a2');
      return 2;
    });
    const other = inTurn('b', async () => {
      order.push('b1');
      return 3;
    });
    assert.equal(await other, 3);
    assert.deepEqual(order, ['a1 start', 'b1']);
    release();
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    assert.deepEqual(order, ['a1 start', 'b1', 'a1 end', 'a2']);
  });

  it('a call that fails passes the turn on', async () => {
    const inTurn = createTurns();
    const failed = inTurn('a', async () => {
      throw new Error('boom');
    });
    const next = inTurn('a', async () => 'ran');
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 'ran');
  });
});
