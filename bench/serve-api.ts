/** Child process of `npm run bench`: the real API (buildApp) on a free loopback port. */
import { buildApp } from '../api/app';
import { createConfiguredPool } from '../db/pool';
import { loadConfig } from '../lib/config';
import { createTemporalClient } from '../engine/temporal/client';
import { requiredEnv, serveUnderParent } from './kit/child-server';
import { benchEnv } from './kit/stack';

async function main(): Promise<void> {
  const config = loadConfig({
    // The Temporal client is lazy and never connects during the bench.
    ...benchEnv(requiredEnv('BENCH_DATABASE_URL'), process.env.BENCH_TEMPORAL_ADDRESS || '127.0.0.1:7233'),
    // bench/streams.ts opens thousands of live run streams for dozens of users: the limits it sets pass through.
    ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => /^(RUN_STREAMS_|AUTH_RATE_LIMIT_MAX$)/.test(e[0]) && e[1] !== undefined)),
    LOG_LEVEL: 'silent',
    // Enough for ~10 million agent creations at 100 units each: the write bench never hits 402.
    INITIAL_BALANCE: '1000000000',
    // bench/run.ts's metrics scenario starts a second API with metrics off.
    METRICS_ENABLED: process.env.BENCH_METRICS_ENABLED ?? 'true',
  });
  const db = createConfiguredPool(config); // the server's pool, as api/server.ts
  const temporal = createTemporalClient(config);
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
