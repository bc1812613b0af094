import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { withTransaction, type Db } from '../../db/pool';
import { fireKeys } from '../../engine/contract';
import type { FiringTrigger } from '../../engine/outbox/starts';
import type { HandOff } from '../../engine/outbox/handoff';
import { FireRateExceeded, type FireRecorder } from '../../engine/fires/record-fire';
import { NotFoundError, TooManyRequestsError } from '../errors';

export interface FireAdmission {
  db: Db;
  /** Records a fire in the request's transaction (engine/fires/record-fire.ts). */
  recorder: FireRecorder;
  handOff: HandOff;
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
  deps: FireAdmission,
  trigger: FiringTrigger,
  fire: { source: keyof typeof FIRE_KEY; payload: unknown },
  /** More of the same write, in its transaction (a manual fire's audit entry). */
  alongside?: (tx: PoolClient) => Promise<void>,
): Promise<string> {
  const fireId = randomUUID();
  const recorded = await withTransaction(deps.db, async (tx) => {
    const result = await deps.recorder.recordFire(tx, {
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
  deps.handOff.kick(recorded.held);
  return recorded.fireId;
}
