import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRegexThread } from '../../lib/regex-thread';

describe('the matching thread', () => {
  it('matches in full, and takes the accounts in turn: one account\'s backlog does not hold another\'s job', async (t) => {
    const thread = createRegexThread();
    t.after(() => thread.close());
    // A value RE2 needs tens of milliseconds for (its DFA defeated): each job holds the thread a while.
    const slow = 'ab'.repeat(150_000);
    const order: string[] = [];
    const jobs = [
      ...Array.from({ length: 6 }, (_, i) => thread.match('flood', 'a[ab]{60}c', slow).then(() => order.push(`flood ${i}`))),
      thread.match('quiet', 'a[ab]{60}c', slow + 'a' + 'b'.repeat(60) + 'c').then((matched) => order.push(`quiet ${matched}`)),
    ];
    await Promise.all(jobs);
    console.log(`served in the order: ${order.join(', ')}`);
    // The quiet account's one job, asked for after the flood's six, waits only for the flood's job running
    // when it was asked for: its turn comes before the flood's next.
    assert.equal(order.indexOf('quiet true'), 1, order.join(', '));
  });

  it('answers false for no match and survives a value of 1 MiB', async (t) => {
    const thread = createRegexThread();
    t.after(() => thread.close());
    const mib = 'a'.repeat(1024 * 1024);
    assert.equal(await thread.match('x', '.*.*.*.*!', mib), false);
    assert.equal(await thread.match('x', '.*.*.*.*!', mib.slice(1) + '!'), true);
  });
});
