import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { createSlotWaits, SLOT_POLL_MS, type WakeReason } from '../../engine/deliveries/slot-waits';

/**
 * The in-process slot wait (engine/deliveries/slot-waits.ts) on node's fake timers: what wakes a waiting first attempt,
 * and the one poll per webhook that finds slots freed by another process.
 */

/** One process's slot waits, as engine/compose.ts builds them. */
const { slotFreedHere, slotWaiter, slotWaitersHere, wakeSlotWaiter } = createSlotWaits();

let n = 0;
/** A delivery of its own per call, so the module's registry never mixes tests. */
const slot = (generation = 1) => ({ deliveryId: `delivery-${++n}`, generation });
const webhook = () => `webhook-${++n}`;

function fakeTimers(t: TestContext, now = 1_000_000): void {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now });
}

/** Lets settled promises run their callbacks (setImmediate is not faked). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A wait whose outcome can be looked at before it settles. */
function watch(wait: Promise<WakeReason>): { reason: () => WakeReason | undefined } {
  let reason: WakeReason | undefined;
  void wait.then((r) => (reason = r));
  return { reason: () => reason };
}

describe('slot waits', () => {
  it('a waiter told before it waits returns at once; "released" is not overwritten by a later poll', async (t) => {
    fakeTimers(t);
    const waiter = slotWaiter(slot());
    waiter.tell('poll');
    waiter.tell('released');
    waiter.tell('poll');
    assert.equal(await waiter.next(60_000), 'released');
    waiter.tell('poll');
    assert.equal(await waiter.next(60_000), 'poll', 'told once: the next wait starts afresh');
    waiter.end();
  });

  it('a waiter nobody tells wakes with "timeout" after its time, not before', async (t) => {
    fakeTimers(t);
    const waiter = slotWaiter(slot());
    const wait = watch(waiter.next(500));
    t.mock.timers.tick(499);
    await settle();
    assert.equal(wait.reason(), undefined);
    t.mock.timers.tick(1);
    await settle();
    assert.equal(wait.reason(), 'timeout');
    waiter.end();
  });

  it('a waiter told while it waits wakes with the reason, and its timeout no longer counts', async (t) => {
    fakeTimers(t);
    const waiter = slotWaiter(slot());
    const first = waiter.next(1000);
    t.mock.timers.tick(10);
    waiter.tell('released');
    assert.equal(await first, 'released');
    // The first wait's timer (due at 1,000) must not end the second wait, nor swallow what it is told.
    const second = watch(waiter.next(5000));
    t.mock.timers.tick(1500);
    await settle();
    assert.equal(second.reason(), undefined);
    waiter.tell('poll');
    await settle();
    assert.equal(second.reason(), 'poll');
    waiter.end();
  });

  it('wakeSlotWaiter finds the waiter of that delivery and generation only, until it ends', async (t) => {
    fakeTimers(t);
    const s = slot(3);
    const before = slotWaitersHere();
    const waiter = slotWaiter(s);
    assert.equal(slotWaitersHere(), before + 1);
    assert.equal(wakeSlotWaiter({ deliveryId: s.deliveryId, generation: 4 }), false, 'another generation');
    assert.equal(wakeSlotWaiter(slot()), false, 'another delivery');
    assert.equal(wakeSlotWaiter(s), true);
    assert.equal(await waiter.next(60_000), 'released');
    waiter.end();
    assert.equal(slotWaitersHere(), before);
    assert.equal(wakeSlotWaiter(s), false, 'ended');
  });

  it("an older waiter of the same delivery ending does not unregister the newer one", (t) => {
    fakeTimers(t);
    const s = slot();
    const older = slotWaiter(s);
    const newer = slotWaiter(s);
    older.end();
    assert.equal(wakeSlotWaiter(s), true);
    newer.end();
    assert.equal(wakeSlotWaiter(s), false);
  });

  it('every SLOT_POLL_MS the oldest waiter of each webhook is polled, and only it', async (t) => {
    fakeTimers(t);
    const [a, b] = [webhook(), webhook()];
    const [a1, a2, b1] = [slotWaiter(slot()), slotWaiter(slot()), slotWaiter(slot())];
    a1.join(a);
    a2.join(a);
    b1.join(b);
    const waits = [a1, a2, b1].map((w) => watch(w.next(60_000)));
    t.mock.timers.tick(SLOT_POLL_MS - 1);
    await settle();
    assert.deepEqual(waits.map((w) => w.reason()), [undefined, undefined, undefined]);
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(waits.map((w) => w.reason()), ['poll', undefined, 'poll'], 'one question per webhook, by its oldest waiter');
    for (const w of [a1, a2, b1]) w.end();
  });

  it('a waiter that took a slot after a poll passes the turn at once and moves the line; one that leaves otherwise does not', async (t) => {
    fakeTimers(t, 5_000_000);
    const hook = webhook();
    const [first, second, third] = [slotWaiter(slot()), slotWaiter(slot()), slotWaiter(slot())];
    for (const w of [first, second, third]) w.join(hook);
    assert.equal(second.lineMovedAt(), 0, 'not moved since it joined');

    const secondWait = watch(second.next(60_000));
    first.end(); // left without a slot: nobody is told, the line has not moved
    await settle();
    assert.equal(secondWait.reason(), undefined);
    assert.equal(second.lineMovedAt(), 0);

    t.mock.timers.tick(7);
    second.tell('poll');
    await settle();
    assert.equal(secondWait.reason(), 'poll');
    const thirdWait = watch(third.next(60_000));
    second.end(true); // took a slot after a poll: the next waiter asks too, without waiting for the poll
    await settle();
    assert.equal(thirdWait.reason(), 'poll');
    assert.equal(third.lineMovedAt(), 5_000_007);
    third.end();
  });

  it('a slot given back here moves the line of that webhook only; the last waiter leaving ends the group', (t) => {
    fakeTimers(t, 9_000_000);
    const [hook, other] = [webhook(), webhook()];
    const waiter = slotWaiter(slot());
    const elsewhere = slotWaiter(slot());
    assert.equal(waiter.lineMovedAt(), 0, 'not in a line yet');
    waiter.join(hook);
    waiter.join(other); // joins once: stays in its first line
    elsewhere.join(other);
    t.mock.timers.tick(42);
    slotFreedHere(hook);
    assert.equal(waiter.lineMovedAt(), 9_000_042);
    assert.equal(elsewhere.lineMovedAt(), 0);
    waiter.end();
    elsewhere.end();

    const later = slotWaiter(slot());
    later.join(hook);
    assert.equal(later.lineMovedAt(), 0, "a new group: the old line's movement is gone with its last waiter");
    later.end();
  });
});
