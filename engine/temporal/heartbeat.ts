import { Context } from '@temporalio/activity';

/**
 * How often a long activity heartbeats (Temporal sends at most one per 0.8 × its heartbeat timeout), the
 * first time one interval after it began: a quick activity (most are) sends none, and each heartbeat is
 * an RPC and a write of the server's. The server's heartbeat timeout counts from the attempt's start, so a
 * worker that dies before the first heartbeat is noticed just as soon.
 */
const HEARTBEAT_EVERY_MS = 1_000;

/** The running activity's context; undefined when called directly (tests). */
export function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/**
 * Runs `call` while the activity heartbeats (see above), with the activity's cancellation as its signal,
 * so a worker that dies mid-activity is noticed within the activity's heartbeat timeout (seconds) and the
 * activity retried, instead of at its start-to-close timeout. Outside an activity it just runs `call`.
 */
export async function whileHeartbeating<T>(call: (signal?: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = activityContext();
  if (!ctx) return call(undefined);
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await call(ctx.cancellationSignal);
  } finally {
    clearInterval(timer);
  }
}
