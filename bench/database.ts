import pg from 'pg';
import { ensureDatabase, runMigrations } from '../db/migrate';

/** The Postgres server the bench uses: BENCH_POSTGRES_URL, else DATABASE_URL's server, else local trust auth. */
function serverUrl(): URL {
  return new URL(process.env.BENCH_POSTGRES_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
}

async function dropDatabase(name: string): Promise<void> {
  const admin = serverUrl();
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database `bench_<pid>`; `drop()` removes it (and any connection still open to it). */
export async function createBenchDatabase(): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `bench_${process.pid}`;
  const url = serverUrl();
  url.pathname = `/${name}`;
  await dropDatabase(name); // a leftover from a killed run with the same pid
  await ensureDatabase(url.toString());
  await runMigrations(url.toString());
  return { name, url: url.toString(), drop: () => dropDatabase(name) };
}
