import path from 'node:path';
import pg from 'pg';
import { migrate } from 'postgres-migrations';

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

/** Applies pending migrations; safe to run concurrently (postgres-migrations takes an advisory lock). */
export async function runMigrations(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await migrate({ client }, MIGRATIONS_DIR, { logger: () => {} });
  } finally {
    await client.end();
  }
}

/** Creates the database named in the URL when it does not exist yet (connects to `postgres`). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name) return;
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } catch (err) {
    // Another process created it between our check and our create.
    if ((err as { code?: string }).code !== '42P04') throw err;
  } finally {
    await client.end();
  }
}
