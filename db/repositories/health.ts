import type { Queryable } from '../pool';

export function createHealthRepository(db: Queryable) {
  return {
    /** The database this connection is on: a round trip that proves the connection works. */
    async currentDatabase(q: Queryable = db): Promise<string> {
      const { rows } = await q.query<{ database: string }>('SELECT current_database() AS database');
      return rows[0]!.database;
    },
  };
}
