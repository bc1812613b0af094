import { dropDatabase, ensureDatabase, urlForDatabase } from '../db/admin';
import { runMigrations } from '../db/migrate';

/** The Postgres server the bench uses: BENCH_POSTGRES_URL, else DATABASE_URL's server, else local trust auth. */
function serverUrl(): URL {
  return new URL(process.env.BENCH_POSTGRES_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
}

/** A fresh, migrated database `bench_<pid>`; `drop()` removes it (and any connection still open to it). */
export async function createBenchDatabase(): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `bench_${process.pid}`;
  const url = urlForDatabase(serverUrl().toString(), name);
  await dropDatabase(url); // a leftover from a killed run with the same pid
  await ensureDatabase(url);
  await runMigrations(url);
  return { name, url, drop: () => dropDatabase(url) };
}
