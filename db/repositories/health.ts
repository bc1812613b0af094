import type { Queryable } from '../pool';

/** The database this connection is on: a round trip that proves the connection works. */
export async function currentDatabase(q: Queryable): Promise<string> {
  const { rows } = await q.query<{ database: string }>('SELECT current_database() AS database');
  return rows[0]!.database;
}
