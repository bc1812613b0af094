import type { Db } from '../db/pool';

/**
 * Activities are built from their dependencies (samples-typescript's dependency-injection pattern)
 * and registered by the worker. All I/O lives here, never in workflows/.
 */
export function createActivities(deps: { db: Db }) {
  return {
    /** Round trip to Postgres from the worker: proves the worker, its task queue and the database are wired. */
    async checkDatabase(): Promise<{ ok: boolean; at: string }> {
      const { rows } = await deps.db.query<{ now: Date }>('SELECT now() AS now');
      return { ok: true, at: rows[0]!.now.toISOString() };
    },
  };
}
export type Activities = ReturnType<typeof createActivities>;
