import { Context } from '@temporalio/activity';

/** How often a long activity heartbeats (Temporal sends at most one per 0.8 × its heartbeat timeout). */
const HEARTBEAT_EVERY_MS = 1_000;

/**
 * Runs `fn` while the activity heartbeats, so a worker that dies mid-activity is noticed within the
 * activity's heartbeat timeout (seconds) and the activity retried, instead of at its start-to-close
 * timeout. Outside an activity (a test calling it directly) it just runs `fn`.
 */
export async function whileHeartbeating<T>(fn: () => Promise<T>): Promise<T> {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return fn();
  }
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
