import type { Db } from '../db/pool';
import { createHealthRepository } from '../db/repositories/health';
import { createDeliveryActivities } from './deliveries';
import type { ActivityDeps } from './deps';
import { createEventMatchingActivities } from './event-matching';
import { withFailureClassification } from './failures';
import { createFireActivities } from './fires';
import { createRecoveryActivities } from './recoveries';
import { createReplayActivities } from './replays';
import { createRetentionActivities } from './retention';
import { createRunActivities } from './runs';

/**
 * Activities are built from the worker's engine (engine/compose.ts) and registered by the worker. All I/O
 * lives here, never in workflows/. Every activity's failures are classified the same way
 * (activities/failures.ts): the deterministic ones are non-retryable, retrying would only repeat them
 * (docs/architecture.md § Limits and fairness).
 */
export function createActivities(deps: ActivityDeps) {
  return withFailureClassification({
    ...healthActivities(deps.db),
    ...createFireActivities(deps),
    ...createEventMatchingActivities(deps),
    ...createDeliveryActivities(deps),
    ...createRecoveryActivities(deps),
    ...createReplayActivities(deps),
    ...createRunActivities(deps),
    ...createRetentionActivities(deps),
  });
}
export type Activities = ReturnType<typeof createActivities>;

function healthActivities(db: Db) {
  const health = createHealthRepository(db);
  return {
    /** Round trip to Postgres from the worker: proves the worker, its task queue and the database are wired. */
    async checkDatabase(): Promise<{ ok: boolean; database: string }> {
      return { ok: true, database: await health.currentDatabase() };
    },
  };
}
