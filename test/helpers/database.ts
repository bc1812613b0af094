import { randomBytes } from 'node:crypto';
import { dropDatabase, urlForDatabase, withMaintenanceClient } from '../../db/admin';
import { createPool, type Db } from '../../db/pool';
import { onCleanup, type Cleanup } from './cleanup';

export interface TestDatabase {
  url: string;
  db: Db;
  /** Ends the pool and drops the database now (it is dropped when `t` ends otherwise); once only. */
  drop: () => Promise<void>;
}

/**
 * A database of its own, cloned from the migrated template the runner made; dropped when `t` ends.
 * `poolSize` is the size of its pool.
 */
export async function createTestDatabase(t: Cleanup, poolSize = 20): Promise<TestDatabase> {
  const baseUrl = process.env.DATABASE_URL;
  const template = process.env.TEST_TEMPLATE_DB;
  if (!baseUrl || !template) throw new Error('Run tests with `npm test` (it prepares DATABASE_URL and TEST_TEMPLATE_DB)');
  const name = `t_${randomBytes(6).toString('hex')}`;
  await withMaintenanceClient(baseUrl, async (c) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        return;
      } catch (err) {
        // "source database is being accessed by other users": another file is cloning right now.
        if ((err as { code?: string }).code !== '55006' || attempt > 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  const url = urlForDatabase(baseUrl, name);
  const db = createPool(url, poolSize);
  let dropped: Promise<void> | undefined;
  const drop = () =>
    (dropped ??= (async () => {
      await db.end();
      await dropDatabase(url);
    })());
  onCleanup(t, drop);
  return { url, db, drop };
}
