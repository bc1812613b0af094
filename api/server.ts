import { ConfigError, loadConfig, metricsTokenProblem } from '../lib/config';
import { createTemporalClient } from '../lib/temporal-client';
import { createPool } from '../db/pool';
import { buildApp } from './app';

/** Production entry for the API alone: listen, then close in order on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  const refused = metricsTokenProblem(config);
  if (refused) throw new ConfigError(refused);
  const db = createPool(config.databaseUrl, config.databasePoolSize);
  const temporal = createTemporalClient(config);
  const app = await buildApp({ config, db, temporal });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000).unref();
    try {
      await app.close(); // stop accepting, finish in-flight requests
      await temporal.close();
      await db.end();
    } finally {
      clearTimeout(force);
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  await app.listen({ port: config.http.port, host: config.http.host });
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
