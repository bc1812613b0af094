/** Child process: the real API (buildApp) on a free loopback port, configured as in the tests. */
import { buildApp } from '../api/app';
import { createPool } from '../db/pool';
import { createTemporalClient } from '../lib/temporal-client';
import { testConfig } from '../test/helpers/config';
import { requiredEnv, serveUnderParent } from './server-process';

async function main(): Promise<void> {
  const config = testConfig(requiredEnv('BENCH_DATABASE_URL'), {
    LOG_LEVEL: 'silent',
    // Enough for ~10 million agent creations at 100 units each: the write bench never hits 402.
    INITIAL_BALANCE: '1000000000',
    // bench/run.ts's metrics scenario starts a second API with metrics off.
    METRICS_ENABLED: process.env.BENCH_METRICS_ENABLED ?? 'true',
  });
  const db = createPool(config.databaseUrl); // the server's pool: max 10, as api/server.ts
  const temporal = createTemporalClient(config); // lazy; never connects during the bench
  const app = await buildApp({ config, db, temporal, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('unexpected listen address');
  serveUnderParent(address.port, async () => {
    await app.close();
    await temporal.close();
    await db.end();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
