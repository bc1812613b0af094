import { databaseUrlFromEnvironment } from '../lib/config';
import { ensureDatabase } from './admin';
import { runMigrations } from './migrate';

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is required');
  // sslmode and the PGSSL* variables as the API and worker read them.
  const url = databaseUrlFromEnvironment(process.env.DATABASE_URL);
  await ensureDatabase(url);
  await runMigrations(url);
  console.log('migrations applied');
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
