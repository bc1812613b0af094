import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_RETRY_AFTER_MS, nextDelay } from '../../engine/deliveries/attempts';
import { retryAfterMs } from '../../lib/outbound-http';

/** Retry-After (docs/api.md § Webhooks): what an endpoint's header asks for, and the delay a delivery then waits. */
describe('Retry-After', () => {
  const now = Date.parse('2026-11-26T12:00:00.000Z');

  it('reads delta seconds and HTTP dates; anything else is no answer', () => {
    assert.equal(retryAfterMs('2', now), 2000);
    assert.equal(retryAfterMs(' 120 ', now), 120_000);
    assert.equal(retryAfterMs('0', now), 0);
    assert.equal(retryAfterMs('Thu, 26 Nov 2026 12:00:05 GMT', now), 5000);
    assert.equal(retryAfterMs('Thu, 26 Nov 2026 11:00:00 GMT', now), 0, 'a date in the past: at once');
    assert.equal(retryAfterMs(['3', '9'], now), 3000);
    for (const bad of [undefined, '', 'soon', '-5', '1.5', 'Nov 26 2026', 'Thu, 99 Nov 2026 12:00:05 GMT']) assert.equal(retryAfterMs(bad, now), null, String(bad));
    assert.ok(Number.isFinite(retryAfterMs('9'.repeat(400), now)!));
  });

  it('moves the next attempt only later than the schedule, at most a day, and never past the last attempt', () => {
    assert.equal(nextDelay(100, null), 100);
    assert.equal(nextDelay(100, 2000), 2000);
    assert.equal(nextDelay(5000, 2000), 5000, 'the schedule asks for more');
    assert.equal(nextDelay(100, 2 * 86_400_000), MAX_RETRY_AFTER_MS);
    assert.equal(MAX_RETRY_AFTER_MS, 86_400_000);
    assert.equal(nextDelay(2 * 86_400_000, 60_000), 2 * 86_400_000, 'a longer schedule delay is kept');
    assert.equal(nextDelay(null, 2000), null, 'no attempt left');
  });
});
