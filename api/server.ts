// First: tracing must start before the modules it instruments load (pg, Fastify).
import { tracing } from './tracing';
import { ConfigError, loadConfig, metricsTokenProblem } from '../lib/config';
import { createTemporalClient } from '../engine';
import { createConfiguredPool } from '../db/pool';
import { buildApp } from './app';

/** Production entry for the API alone: listen, then close in order on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  const refused = metricsTokenProblem(config);
  if (refused) throw new ConfigError(refused);
  const db = createConfiguredPool(config);
  const temporal = createTemporalClient(config);
  const app = await buildApp({ config, db, temporal });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    const graceMs = config.shutdown.graceMs;
    app.log.info({ signal, graceMs }, 'shutting down');
    // Past the grace, requests still open are cut (their clients retry elsewhere); a close that still
    // hangs after that is ended by the exit.
    const cut = setTimeout(() => {
      app.log.warn(`requests still open after SHUTDOWN_GRACE_MS (${graceMs} ms): closing their connections`);
      app.server.closeAllConnections();
    }, graceMs).unref();
    const force = setTimeout(() => process.exit(1), graceMs + 5_000).unref();
    // A keep-alive connection whose request ends during the drain would otherwise stay open until its
    // keep-alive timeout: closed as soon as it is idle.
    const idle = setInterval(() => app.server.closeIdleConnections(), 100).unref();
    try {
      await app.close(); // stop accepting, end live streams, finish in-flight requests
      clearTimeout(cut);
      clearInterval(idle);
      await temporal.close();
      await db.end();
      await tracing?.shutdown().catch(() => {}); // export the last spans
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
