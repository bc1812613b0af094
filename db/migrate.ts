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
