// First: tracing must start before the modules it instruments load (pg).
import { tracing } from './tracing';
import { parseArgs } from 'node:util';
import { Runtime, type LogLevel } from '@temporalio/worker';
import { ConfigError, loadConfig } from '../lib/config';
import { createConfiguredPool } from '../db/pool';
import { startHealthServer } from './health-server';
import { WorkerLogger } from './sdk-logger';
import { bundleWorkflows, connectWithRetry, createEngineWorker, type EngineWorker } from './worker';

/**
 * The SDK's level for a LOG_LEVEL. Its INFO lines (every state change of the worker, "no Nexus
 * services") are chatter at each start and stop, so it logs them only at LOG_LEVEL debug or trace.
 */
const SDK_LOG_LEVELS: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };

/**
 * Production entry for the worker: the Temporal worker, the outbox hand-off and the reconciler.
 * Shutdown is ours, in order: stop polling and drain running tasks, stop the reconciler, then close
 * the Temporal connection, then the pool.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const healthPort = healthPortFlag() ?? config.workerHealthPort;
  // We handle signals ourselves so the order of shutdown is explicit.
  Runtime.install({ shutdownSignals: [], logger: new WorkerLogger(SDK_LOG_LEVELS[config.logLevel] ?? 'WARN') });
  const db = createConfiguredPool(config);
  const stop = new AbortController();
  let engine: EngineWorker | undefined;

  const shutdown = (signal: string) => {
    if (stop.signal.aborted) return;
    console.log(`[worker] ${signal}: shutting down`);
    stop.abort();
    // Activities in flight get SHUTDOWN_GRACE_MS to finish (the workers' shutdownGraceTime); then the
    // rest of the shutdown, or the exit.
    setTimeout(() => process.exit(1), config.shutdown.graceMs + 5_000).unref();
    if (engine) engine.shutdown();
    else process.exit(0);
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const health =
    healthPort === null
      ? undefined
      : await startHealthServer({
          port: healthPort,
          host: config.http.host,
          readiness: () => (stop.signal.aborted ? 'shutting down' : engine ? engine.notPolling() : 'not connected to Temporal yet'),
        });
  if (health) console.log(`[worker] health on http://${config.http.host}:${health.port}/health and /ready`);

  const started = Date.now();
  const workflowBundle = await bundleWorkflows();
  console.log(`[worker] workflows bundled (${(workflowBundle.code.length / 2 ** 20).toFixed(1)} MiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  // A worker that stops on an error (Temporal gone for long, a fatal poll error) is rebuilt on a new
  // connection: the process only ends on a signal, so automation never silently stops.
  while (!stop.signal.aborted) {
    const connection = await connectWithRetry(config.temporal.connection, (m) => console.log(`[worker] ${m}`), stop.signal);
    try {
      engine = await createEngineWorker({ connection, config, db, workflowBundle });
      if (stop.signal.aborted) break;
      console.log(
        `[worker] polling task queue on ${config.temporal.address} (namespace ${config.temporal.namespace}, ${config.temporal.security}); ` +
          `reconciler every ${config.engine.reconcileIntervalMs} ms`,
      );
      await engine.run();
    } catch (err) {
      if (stop.signal.aborted) break;
      console.error(`[worker] stopped on an error; restarting in 2 s: ${(err as Error).message ?? err}`);
      await new Promise((r) => setTimeout(r, 2_000));
    } finally {
      engine = undefined;
      await connection.close().catch(() => {});
    }
  }
  await health?.close();
  await db.end();
  await tracing?.shutdown().catch(() => {}); // export the last spans
}

/** `--health-port 9091` or `--health-port=9091`: over WORKER_HEALTH_PORT. */
function healthPortFlag(): number | null {
  const { values } = parseArgs({ options: { 'health-port': { type: 'string' } }, strict: false });
  const raw = values['health-port'];
  if (raw === undefined) return null;
  const port = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`--health-port: must be a port number (0-65535), not ${String(raw)}`);
  return port;
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  },
);
