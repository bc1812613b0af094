import { ensureDatabase } from './admin';
import { runMigrations } from './migrate';

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required');
  await ensureDatabase(url);
  await runMigrations(url);
  console.log('migrations applied');
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
