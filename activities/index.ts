import type { Db } from '../db/pool';

/**
 * Activities are built from their dependencies (samples-typescript's dependency-injection pattern)
 * and registered by the worker. All I/O lives here, never in workflows/.
 */
export function createActivities(deps: { db: Db }) {
  return {
    /** Round trip to Postgres from the worker: proves the worker, its task queue and the database are wired. */
    async checkDatabase(): Promise<{ ok: boolean; database: string }> {
      const { rows } = await deps.db.query<{ database: string }>('SELECT current_database() AS database');
      return { ok: true, database: rows[0]!.database };
    },
  };
}
export type Activities = ReturnType<typeof createActivities>;
