import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { FireRateExceeded, fireKeys, type Engine, type FiringTrigger } from '../../engine';
import { NotFoundError, TooManyRequestsError } from '../errors';

export interface FireNowDeps {
  /** The engine's unit of work: the fire recorded in the request's transaction (engine/fires/record-fire.ts). */
  engine: Pick<Engine, 'transaction'>;
}

/** The fire key of a fire asked for now (engine/contract.ts `fireKeys`). */
const FIRE_KEY = { manual: fireKeys.manual, webhook: fireKeys.hook } as const;

/**
 * Fires a trigger now (`POST …/fire`, the trigger's hook), in the request's own transaction: the fire is
 * recorded once (fire key `manual-<fireId>` / `hook-<fireId>`), admitted within the account's
 * FIRES_PER_MINUTE (429 with Retry-After over it, nothing recorded), counted, and its run and event
 * fan-out written (engine/fires/record-fire.ts) — no workflow of its own. After the commit the run's workflow and
 * any delivery that must wait are handed to Temporal, and the first attempt of each delivery is made by
 * this process. Returns the fire's id (a trigger disabled or linked to a template or paused agent by
 * now records the fire as skipped).
 */
export async function fireNow(
  deps: FireNowDeps,
  trigger: FiringTrigger,
  fire: { source: keyof typeof FIRE_KEY; payload: unknown },
  /** More of the same write, in its transaction (a manual fire's audit entry). */
  alongside?: (tx: PoolClient) => Promise<void>,
): Promise<string> {
  const fireId = randomUUID();
  const recorded = await deps.engine.transaction(async (tx, unit) => {
    const result = await unit.recordFire({
      triggerId: trigger.id,
      source: fire.source,
      fireId,
      payload: fire.payload ?? null,
      fireKey: FIRE_KEY[fire.source](fireId),
    });
    if (result.status !== 'gone') await alongside?.(tx);
    return result;
  }).catch((err: unknown) => {
    if (err instanceof FireRateExceeded) throw new TooManyRequestsError(err.message, err.retryAfterSeconds);
    throw err;
  });
  if (recorded.status === 'gone') throw new NotFoundError('Trigger');
  return recorded.fireId;
}
