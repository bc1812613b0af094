import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { Config } from '../lib/config';
import { inOpenUnit, joinedUnit } from './write-unit';

// Return bigint columns (ledger sums, counters) as JS numbers; all our amounts fit in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Db = pg.Pool;
/** Anything that can run a query: the pool or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

type Call = (...args: unknown[]) => unknown;

/**
 * Every statement with parameters runs as a named prepared statement of its connection: Postgres parses
 * and plans it once per connection, not at every call (bench:runs: its CPU per run halved, 10 → 5 ms, and
 * the client's fell too). Names come from the text (one name per distinct text, so a connection never
 * sees one name with two texts), for the first MAX_NAMED_STATEMENTS texts of the process; any further
 * text runs unnamed, so a flood of distinct texts can't grow a connection's memory without bound.
 * A migration that changes the columns a prepared statement returns makes Postgres refuse that statement
 * on every connection that prepared it ("cached plan must not change result type"): the statement fails
 * once, and the names start afresh (a new generation) so that the next call prepares it again.
 */
const MAX_NAMED_STATEMENTS = 1_000;
const statements = { generation: 0, names: new Map<string, string>() };

/** A statement's name: its first keyword and a number (`select_0_12`), so a trace's query span says what it does (`pg.query:select_0_12`). */
function statementName(text: string): string | undefined {
  let name = statements.names.get(text);
  if (!name && statements.names.size < MAX_NAMED_STATEMENTS) {
    const verb = /^\s*([a-z]{1,12})/i.exec(text)?.[1]?.toLowerCase() ?? 's';
    statements.names.set(text, (name = `${verb}_${statements.generation}_${statements.names.size}`));
  }
  return name;
}

function isStalePlan(err: unknown): boolean {
  return (err as { code?: unknown })?.code === '0A000' && /cached plan must not change result type/.test((err as Error).message);
}

function prepareStatements(client: pg.PoolClient | pg.Client): void {
  const query = client.query.bind(client) as Call;
  const forget = (name: string) => (err: unknown) => {
    if (isStalePlan(err) && name.split('_')[1] === String(statements.generation)) {
      statements.generation++;
      statements.names.clear();
    }
  };
  client.query = ((...args: unknown[]) => {
    // (text, values) or, from the pool's own query, (text, values, callback).
    const [text, values, callback, ...rest] = args;
    const name = typeof text === 'string' && Array.isArray(values) && rest.length === 0 && (callback === undefined || typeof callback === 'function') ? statementName(text) : undefined;
    if (!name) return query(...args);
    const config = { name, text, values };
    if (typeof callback === 'function') {
      return query(config, (err: unknown, result: unknown) => {
        if (err) forget(name)(err);
        (callback as Call)(err, result);
      });
    }
    return (query(config) as Promise<unknown>).catch((err: unknown) => {
      forget(name)(err);
      throw err;
    });
  }) as typeof client.query;
}

/**
 * How every connection of a process opens (the pool's, and the API's LISTEN connection): a handshake not
 * answered within `connectTimeoutMs` fails; TCP keep-alive probes a connection idle for 10 s, so one whose
 * host went away (a long-lived LISTEN connection above all) is found and replaced.
 */
export function connectionLimits(connectTimeoutMs: number): Pick<pg.ClientConfig, 'connectionTimeoutMillis' | 'keepAlive' | 'keepAliveInitialDelayMillis'> {
  return { connectionTimeoutMillis: connectTimeoutMs, keepAlive: true, keepAliveInitialDelayMillis: 10_000 };
}

/**
 * The process's pool. Inside a write unit (db/write-unit.ts) its `query` runs on the unit's connection,
 * in the unit's transaction, and `connect` is refused: a request in a unit holds exactly one connection,
 * so a burst of them can never leave the pool waiting on itself.
 * A query that gets no connection within `connectTimeoutMs` (none free, or a new one's handshake not
 * answered: a database host that drops packets) fails with node-postgres' timeout error, which the API
 * answers 503 (api/plugins/error-handler.ts isDatabaseUnavailable); a PoolBusyError instead when connections
 * of the pool still answer (every one in use: busy, not down).
 */
export function createPool(databaseUrl: string, max = 10, connectTimeoutMs = 5_000): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, ...connectionLimits(connectTimeoutMs) });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  /** Clients whose connection was made and not yet removed: some that still answer mean the database does. */
  const connected = new Set<pg.PoolClient>();
  pool.on('connect', (client) => {
    connected.add(client);
    prepareStatements(client);
  });
  pool.on('remove', (client) => connected.delete(client));
  const busy = (err: unknown) => (isPoolWaitTimeout(err) && [...connected].some(answers) ? new PoolBusyError(err as Error) : err);
  const poolQuery = pool.query.bind(pool) as Call;
  const poolConnect = pool.connect.bind(pool) as Call;
  pool.query = ((...args: unknown[]) => {
    const unit = joinedUnit(pool);
    if (unit) return (unit.client.query as Call).apply(unit.client, args);
    const callback = args[args.length - 1];
    if (typeof callback === 'function') return poolQuery(...args.slice(0, -1), (err: unknown, ...rest: unknown[]) => (callback as Call)(err && busy(err), ...rest));
    return (poolQuery(...args) as Promise<unknown>).catch((err: unknown) => Promise.reject(busy(err)));
  }) as Db['query'];
  pool.connect = ((...args: unknown[]) => {
    if (joinedUnit(pool)) return Promise.reject(new Error('a second connection was asked for inside a write unit; use its transaction'));
    if (typeof args[0] === 'function') return poolConnect(...args);
    return (poolConnect(...args) as Promise<unknown>).catch((err: unknown) => Promise.reject(busy(err)));
  }) as Db['connect'];
  return pool;
}

/** node-postgres' words for a wait for a pooled connection that ran out (every one in use, or still being made). */
function isPoolWaitTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === 'timeout exceeded when trying to connect';
}

/** A client that can still run a query (node-postgres marks one that ended or failed as not queryable). */
const answers = (client: pg.PoolClient) => (client as unknown as { _queryable?: boolean })._queryable !== false;

/**
 * No pooled connection came within DATABASE_CONNECT_TIMEOUT_MS while the pool held connections that answer: the
 * database is up and this process's pool is busy, not an outage (the API answers 503 "busy, try again" with
 * Retry-After: api/plugins/error-handler.ts). With none that answers, the wait's own error stands (an outage).
 */
export class PoolBusyError extends Error {
  constructor(cause: Error) {
    super('every pooled database connection is in use', { cause });
    this.name = 'PoolBusyError';
  }
}

/** The pool of an API or worker process, as its configuration says (DATABASE_URL, DATABASE_POOL_SIZE, DATABASE_CONNECT_TIMEOUT_MS). */
export function createConfiguredPool(config: Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'databaseConnectTimeoutMs'>): Db {
  return createPool(config.databaseUrl, config.databasePoolSize, config.databaseConnectTimeoutMs);
}

/** Marks the code a transaction's callback runs (and what it starts) until the transaction's connection is released. */
const holding = new AsyncLocalStorage<{ held: boolean }>();

/**
 * True while the caller holds a pooled connection: inside a `withTransaction` callback or an open write
 * unit. Calls that may wait long on another service (Temporal: engine/temporal/client.ts) are refused then,
 * so that they never keep a connection from everyone else (docs/architecture.md § Limits and fairness).
 */
export function holdsConnection(): boolean {
  return holding.getStore()?.held === true || inOpenUnit();
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
  // Mutable: work the callback started and left running sees the connection released once it is.
  const mark = { held: true };
  try {
    await client.query('BEGIN');
    const result = await holding.run(mark, () => fn(client));
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    mark.held = false;
    client.off('error', onError);
    client.release(lost);
  }
}
