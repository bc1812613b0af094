import pg from 'pg';
import { joinedUnit } from './write-unit';

// Return bigint columns (ledger sums, counters) as JS numbers; all our amounts fit in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Db = pg.Pool;
/** Anything that can run a query: the pool or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

type Call = (...args: unknown[]) => unknown;

/**
 * The process's pool. Inside a write unit (db/write-unit.ts) its `query` runs on the unit's connection,
 * in the unit's transaction, and `connect` is refused: a request in a unit holds exactly one connection,
 * so a burst of them can never leave the pool waiting on itself.
 */
export function createPool(databaseUrl: string, max = 10): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const poolQuery = pool.query.bind(pool) as Call;
  const poolConnect = pool.connect.bind(pool) as Call;
  pool.query = ((...args: unknown[]) => {
    const unit = joinedUnit(pool);
    return unit ? (unit.client.query as Call).apply(unit.client, args) : poolQuery(...args);
  }) as Db['query'];
  pool.connect = ((...args: unknown[]) => {
    if (joinedUnit(pool)) return Promise.reject(new Error('a second connection was asked for inside a write unit; use its transaction'));
    return poolConnect(...args);
  }) as Db['connect'];
  return pool;
}

/** Runs fn in one transaction; commits on success, rolls back on any error. Inside a write unit, a savepoint of it. */
export async function withTransaction<T>(db: Db, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const unit = joinedUnit(db);
  if (unit) return unit.nested(fn);
  const client = await db.connect();
  // A connection dying mid-transaction fails the transaction's query; without a listener its 'error'
  // event would also crash the process. Such a client is destroyed on release, not pooled again.
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost = err;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.off('error', onError);
    client.release(lost);
  }
}
