import fs from 'node:fs';
import type { Queryable } from './pool';
import { MIGRATIONS_DIR } from './migrate';

/** The migration files this build carries ("20_runs_account_page.sql" → 20), read once. */
let fileIds: number[] | undefined;
function migrationFileIds(): number[] {
  fileIds ??= fs
    .readdirSync(MIGRATIONS_DIR)
    .map((f) => /^(\d+)_.+\.sql$/.exec(f)?.[1])
    .filter((id): id is string => id !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  return fileIds;
}

/**
 * Which of this build's migrations the database has not applied (postgres-migrations records each in
 * `migrations`): none means the schema is current. A database with no `migrations` table has applied none.
 */
export async function pendingMigrations(db: Queryable): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM migrations').catch((err: { code?: string }) => {
    if (err.code === '42P01') return { rows: [] as { id: number }[] }; // undefined_table: nothing migrated yet
    throw err;
  });
  const applied = new Set(rows.map((r) => Number(r.id)));
  return migrationFileIds().filter((id) => !applied.has(id));
}
