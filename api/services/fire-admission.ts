import type { PoolClient } from 'pg';
import { withTransaction, type Db } from '../../db/pool';
import type { FireRateRepository } from '../../db/repositories/fires';
import { startFire, type FiringTrigger } from '../../lib/engine-starts';
import { TooManyRequestsError } from '../errors';

export interface FireAdmission {
  db: Db;
  fireRate: FireRateRepository;
  /** FIRES_PER_MINUTE */
  perMinute: number;
}

/**
 * Queues a manual or hook fire within the account's FIRES_PER_MINUTE (docs/api.md § Rate limits): the fire is counted
 * and queued in one transaction; over the limit nothing is queued and the caller gets 429 with
 * Retry-After (the seconds until the account's minute ends). Returns the fire's id.
 */
export async function queueFire(
  deps: FireAdmission,
  trigger: FiringTrigger,
  fire: Parameters<typeof startFire>[2],
  /** More of the same write, in its transaction (a manual fire's audit entry). */
  alongside?: (tx: PoolClient) => Promise<void>,
): Promise<string> {
  return withTransaction(deps.db, async (tx) => {
    const over = await deps.fireRate.take(trigger.account_id, deps.perMinute, tx);
    if (over) {
      throw new TooManyRequestsError(
        `Too many fires: at most ${deps.perMinute} per minute per account; retry in ${over.retryAfterSeconds} seconds`,
        over.retryAfterSeconds,
      );
    }
    const fireId = await startFire(tx, trigger, fire);
    await alongside?.(tx);
    return fireId;
  });
}
