import type { ActivityFailure, RetryPolicy } from '@temporalio/common';

/**
 * Every activity of the fire, event-matching, recovery and delivery workflows retries a bounded number of times
 * (docs/architecture.md § Limits and fairness): a failure that would only repeat is non-retryable and fails at once
 * (activities/failures.ts); any other is retried with backoff for about ten minutes (1 s doubling to
 * 1 min, 15 attempts), long enough for a database failover or a worker restart, and then fails for
 * good, visibly, instead of occupying the workers for ever.
 */
export const ENGINE_RETRY: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 15,
};

/**
 * A delivery attempt's activity: an HTTP request that may already have been sent, so only a few
 * retries (a worker that died mid-attempt); the delivery's own schedule is the real retrying.
 */
export const ATTEMPT_RETRY: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 5,
};

/**
 * A delivery attempt heartbeats every second while it runs: when its worker dies, Temporal retries it
 * once this has passed without a heartbeat, rather than after the attempt's whole time limit.
 */
export const ATTEMPT_HEARTBEAT_TIMEOUT = '5 seconds';

/** Why an activity failed for good, as its last attempt said. */
export function reasonOf(err: ActivityFailure): string {
  return err.cause?.message || err.message;
}
