import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureDatabase } from '../db/admin';
import { runMigrations } from '../db/migrate';
import { ensureConsoleBuilt } from './console-build';
import { loadOrCreateDevSecrets } from './dev-secrets';
import { clusterDirFor, PostgresDataDirError, startEmbeddedPostgres } from './embedded-postgres';
import { canConnect, freePortPreferring, isAlive, prefixedPrinter, runInOwnProcessGroup, superviseNode } from './processes';
import { locate, TEMPORAL_CLI } from './temporal-binaries';
import { DEV_STACK_RETENTION, startTemporalDevServer } from './temporal-dev-server';
import { databaseUrlFromEnvironment } from '../lib/config';
import { DAY_MS, SECOND_MS, tryParseDuration } from '../lib/durations';

/**
 * `npm start`: Postgres (DATABASE_URL or embedded), the Temporal dev server (or TEMPORAL_ADDRESS), migrations,
 * the worker and the API, in one command; prints the URLs; restarts the worker or the API when one crashes;
 * stops everything in order on Ctrl-C (API, worker, Temporal, Postgres).
 */

const ROOT = path.resolve(__dirname, '..');
const DATA_DIR = path.join(ROOT, '.data');
const LOCK_FILE = path.join(DATA_DIR, 'dev-stack.pid');
const TEMPORAL_PORT = 7233;
const TEMPORAL_UI_PORT = 8233;
/**
 * How long the shutdown may take in all before what is left is killed (the launcher SIGKILLs the process group):
 * after a failure, nothing is worth waiting for (a start-up failure ends `npm start` within 10 s); on Ctrl-C the
 * worker may drain, within its own 10 s. A second Ctrl-C kills at once.
 */
const SHUTDOWN_LIMIT_MS = { afterFailure: 7_000, onRequest: 30_000 };

/** Why TEMPORAL_RETENTION cannot be the namespace's retention, or undefined when it can (a duration of 1 minute to 30 days). */
function retentionProblem(text: string): string | undefined {
  const parsed = tryParseDuration(text);
  if ('error' in parsed) return parsed.error;
  if (parsed.ms < 60 * SECOND_MS || parsed.ms > 30 * DAY_MS) return `is ${text}; use a duration from 1m to 30d, such as "15m" or "1h"`;
  return undefined;
}

const say = prefixedPrinter('dev', 1);
const log = (message: string) => say(message, 'stdout');
const logError = (message: string) => say(message, 'stderr');

class StartupError extends Error {
  override name = 'StartupError';
}

/** A path as the user would type it from here: relative inside the working directory, absolute outside it. */
const rel = (p: string) => {
  const relative = path.relative(process.cwd(), p);
  return relative.startsWith('..') ? p : relative || '.';
};
const redactUrl = (url: string) => url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');

/** One dev stack per `.data/`: a second one would fight the first over Postgres and the ports. */
function acquireLock(): () => void {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const other = Number.parseInt(fs.existsSync(LOCK_FILE) ? fs.readFileSync(LOCK_FILE, 'utf8') : '', 10);
  if (other > 0 && other !== process.pid && isAlive(other)) {
    let args = 'dev-stack'; // when ps cannot tell, err on the side of not running twice
    try {
      args = execFileSync('ps', ['-o', 'args=', '-p', String(other)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      // keep the assumption
    }
    if (args.includes('dev-stack')) {
      throw new StartupError(`Another \`npm start\` is already running on ${rel(DATA_DIR)} (pid ${other}). Stop it first (Ctrl-C in its terminal, or kill -INT ${other}).`);
    }
  }
  fs.writeFileSync(LOCK_FILE, `${process.pid}\n`);
  return () => {
    if (fs.existsSync(LOCK_FILE) && fs.readFileSync(LOCK_FILE, 'utf8').trim() === String(process.pid)) fs.rmSync(LOCK_FILE);
  };
}

async function requireFreePort(port: number, host: string | undefined, what: string, hint: string): Promise<void> {
  if ((await freePortPreferring(port, host)) !== port) {
    throw new StartupError(`Port ${port} is already in use, so ${what} cannot start there. ${hint}`);
  }
}

/**
 * Embedded Postgres with its data in EMBEDDED_POSTGRES_DIR, as given, or in `.data/postgres`, which root's
 * `postgres` user may be unable to reach (a project under /root): then it is a link to where that user can
 * (clusterDirFor). A data directory it cannot use stops the start-up with the reason and the fix.
 */
async function startPostgres(): Promise<{ url: string; note: string; stop: () => Promise<void> }> {
  const configured = process.env.EMBEDDED_POSTGRES_DIR || undefined;
  const preferred = path.join(DATA_DIR, 'postgres');
  log('starting embedded Postgres');
  try {
    const dataDir = configured ? path.resolve(configured) : await clusterDirFor(preferred, log);
    const postgres = await startEmbeddedPostgres({ dataDir, port: 54329, log });
    const note = configured ? `${rel(dataDir)} (EMBEDDED_POSTGRES_DIR)` : dataDir === preferred ? rel(dataDir) : `${rel(preferred)} -> ${dataDir}`;
    return { url: postgres.url, note, stop: postgres.stop };
  } catch (err) {
    if (err instanceof PostgresDataDirError) {
      const instead = configured ? `Set EMBEDDED_POSTGRES_DIR to a directory it can use (or unset it to use ${rel(preferred)})` : 'Set EMBEDDED_POSTGRES_DIR to a directory it can use';
      throw new StartupError(`Embedded Postgres cannot keep its data in ${rel(err.dir)}: ${err.reason}. ${instead}, or set DATABASE_URL to use a Postgres of your own.`);
    }
    throw new StartupError(`${(err as Error).message}\n(Or set DATABASE_URL to use a Postgres of your own.)`);
  }
}

/** Host to probe and host to show for the API's listen address. */
function apiHosts(host: string): { probe: string; display: string } {
  if (host === '0.0.0.0' || host === '127.0.0.1' || host === 'localhost') return { probe: '127.0.0.1', display: 'localhost' };
  if (host === '::' || host === '::1') return { probe: '::1', display: 'localhost' };
  return { probe: host, display: host.includes(':') ? `[${host}]` : host };
}

async function main(): Promise<number> {
  const controller = new AbortController();
  const { signal } = controller;
  const resources: Array<{ name: string; stop: () => Promise<void> }> = [];
  let interrupted = false;
  let failure: string | undefined;
  let releaseLock = () => {};
  let stopping = 'the start-up';

  // Once the stack stops, its shutdown has a time limit; past it (or at a second Ctrl-C) whatever is left is
  // killed: everything the stack started is in its process group (runInOwnProcessGroup), this process included,
  // so that no child outlives it even when its launcher is gone.
  const stopHard = (why: string) => {
    logError(`${why}; stopping hard (still stopping ${stopping})`);
    releaseLock();
    try {
      process.kill(-process.pid, 'SIGKILL');
    } catch {
      // not the leader of a group of its own
    }
    process.exit(1);
  };
  let limited = false;
  const limitShutdown = (ms: number) => {
    if (limited) return;
    limited = true;
    setTimeout(() => stopHard(`the shutdown did not finish within ${ms / 1000} s`), ms).unref();
  };
  const fail = (message: string) => {
    if (signal.aborted) return;
    failure = message;
    limitShutdown(SHUTDOWN_LIMIT_MS.afterFailure);
    controller.abort();
  };
  const onSignal = (reason: string) => {
    if (signal.aborted) return stopHard(`${reason} again`);
    interrupted = true;
    limitShutdown(SHUTDOWN_LIMIT_MS.onRequest);
    controller.abort();
    log(`${reason}; shutting down (again to stop at once)`);
  };
  await runInOwnProcessGroup(() => onSignal('the terminal is gone'));
  // With the terminal (or a `| tee`) gone, shut down all the same, without printing.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => onSignal(`${sig} received`));
  process.on('uncaughtException', (err) => {
    logError(`unexpected error: ${err.stack ?? err.message}`);
    fail('unexpected error in the dev stack');
  });
  const checkpoint = () => {
    if (signal.aborted) throw new StartupError('interrupted');
  };
  // Every step of the start-up is given up as soon as the stack stops (a failure elsewhere, Ctrl-C), whether or
  // not it would ever finish: the shutdown never waits for the start-up.
  const stopped = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new StartupError('interrupted')), { once: true }));
  stopped.catch(() => {});
  const step = <T>(work: Promise<T>): Promise<T> => Promise.race([work, stopped]);
  /** A process of the stack: stopped in the shutdown, or at once if it comes up after the start-up was given up. */
  const adopt = async <T extends { stop: () => Promise<void> }>(name: string, starting: Promise<T>): Promise<T> => {
    starting.then((resource) => void (signal.aborted && resource.stop().catch(() => {})), () => {});
    const resource = await step(starting);
    resources.push({ name, stop: resource.stop });
    return resource;
  };

  let exitCode = 0;
  try {
    // The settings first: nothing is taken or started for a stack that cannot start as asked.
    const retention = process.env.TEMPORAL_RETENTION || DEV_STACK_RETENTION;
    if (!process.env.TEMPORAL_ADDRESS) {
      const reason = retentionProblem(retention);
      if (reason) throw new StartupError(`TEMPORAL_RETENTION ${reason}.`);
    } else if (process.env.TEMPORAL_RETENTION) {
      log('TEMPORAL_RETENTION is ignored: the Temporal server at TEMPORAL_ADDRESS keeps its namespace\'s own retention');
    }

    // The lock guards what lives in `.data/`; a stack given all of it (as the dev-stack test is) uses none.
    const usesDataDir = !process.env.DATABASE_URL || !process.env.TEMPORAL_ADDRESS || !(process.env.JWT_SECRET && process.env.SECRETS_KEY);
    if (usesDataDir) releaseLock = acquireLock();

    // Preflight: everything that can fail cheaply, before anything is started.
    const host = process.env.HOST || '127.0.0.1';
    const port = Number(process.env.PORT || 3000);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new StartupError(`PORT=${process.env.PORT} is not a valid port.`);
    const hosts = apiHosts(host);
    const baseUrl = `http://${hosts.display}:${port}`;
    await step(requireFreePort(port, hosts.probe, 'the API', 'Stop whatever holds it, or choose another port with PORT=…'));
    if (!process.env.TEMPORAL_ADDRESS) {
      const hint = `If a Temporal server is already running there, use it: TEMPORAL_ADDRESS=127.0.0.1:${TEMPORAL_PORT} npm start. Otherwise stop whatever holds the port.`;
      await step(requireFreePort(TEMPORAL_PORT, undefined, 'the Temporal dev server', hint));
      await step(requireFreePort(TEMPORAL_UI_PORT, undefined, 'the Temporal UI', hint));
      await step(
        locate(TEMPORAL_CLI, log).catch((err: Error) => {
          throw new StartupError(err.message);
        }),
      );
    }

    const secrets = loadOrCreateDevSecrets(DATA_DIR);
    const dataNotes: Array<[label: string, value: string]> = secrets.file ? [['Secrets', rel(secrets.file)]] : [];

    let databaseUrl = process.env.DATABASE_URL || undefined;
    let postgresNote = `${redactUrl(databaseUrl ?? '')} (from DATABASE_URL)`;
    if (!databaseUrl) {
      const postgres = await adopt('postgres', startPostgres());
      databaseUrl = postgres.url;
      postgresNote = `${postgres.url} (embedded)`;
      dataNotes.push(['Postgres data', postgres.note]);
    }
    checkpoint();

    log('applying database migrations');
    try {
      // Opened as the API and the worker will open it: with the PGSSL* variables and libpq's sslmode (lib/config.ts).
      const connectionUrl = databaseUrlFromEnvironment(databaseUrl);
      await step(ensureDatabase(connectionUrl));
      await step(runMigrations(connectionUrl));
    } catch (err) {
      if (signal.aborted) throw err;
      throw new StartupError(`Could not prepare the database at ${redactUrl(databaseUrl)}: ${(err as Error).message}`);
    }
    checkpoint();

    let temporalAddress = process.env.TEMPORAL_ADDRESS || undefined;
    let temporalNote = `${temporalAddress} (from TEMPORAL_ADDRESS)`;
    let temporalUi: string | undefined;
    if (temporalAddress) {
      const colon = temporalAddress.lastIndexOf(':');
      if (!(await step(canConnect(temporalAddress.slice(0, colon).replace(/^\[|\]$/g, ''), Number(temporalAddress.slice(colon + 1)), 3_000)))) {
        logError(`warning: nothing answers at TEMPORAL_ADDRESS=${temporalAddress} yet; the worker will keep retrying`);
      }
    } else {
      const dbFilename = path.join(DATA_DIR, 'temporal.db');
      const namespace = process.env.TEMPORAL_NAMESPACE || 'default';
      log(`starting the Temporal dev server on 127.0.0.1:${TEMPORAL_PORT} (namespace ${namespace}, retention ${retention})`);
      const temporal = await adopt('temporal', startTemporalDevServer({ port: TEMPORAL_PORT, uiPort: TEMPORAL_UI_PORT, dbFilename, namespace, retention, log }));
      temporalAddress = temporal.address;
      temporalNote = `${temporal.address} (dev server)`;
      temporalUi = temporal.uiUrl;
      dataNotes.push(['Temporal data', rel(dbFilename)]);
    }
    checkpoint();

    // The API serves the console from web/dist: built now when missing or older than its sources.
    await ensureConsoleBuilt(log).catch((err: Error) => {
      throw new StartupError(err.message);
    });
    checkpoint();

    // With TEMPORAL_ADDRESS the processes read the whole standard configuration (TLS, API key, the
    // profile of the Temporal config file: lib/temporal-settings.ts); the dev server started here is
    // plaintext, so none of it applies to it.
    const temporalEnv: NodeJS.ProcessEnv = process.env.TEMPORAL_ADDRESS ? {} : ownDevServerTemporalEnv();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...temporalEnv,
      // The console links workflows to the UI of the dev server started here (or to the one configured).
      ...(temporalUi && !process.env.TEMPORAL_UI_URL ? { TEMPORAL_UI_URL: temporalUi } : {}),
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      JWT_SECRET: secrets.JWT_SECRET,
      SECRETS_KEY: secrets.SECRETS_KEY,
      ALLOW_PRIVATE_TARGETS: process.env.ALLOW_PRIVATE_TARGETS || 'true',
      PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL || baseUrl,
    };
    log('starting the worker and the API');
    const children = (
      [
        ['worker', 'worker/main.ts', 33],
        ['api', 'api/server.ts', 32],
      ] as const
    ).map(([name, entry, color]) => {
      const child = superviseNode({ name, entry, color, cwd: ROOT, env, log, onStartupExit: fail });
      resources.push({ name, stop: child.stop });
      return child;
    });

    const healthUrl = `http://${hosts.probe.includes(':') ? `[${hosts.probe}]` : hosts.probe}:${port}/api/health`;
    for (const deadline = Date.now() + 120_000; ; await sleep(250)) {
      checkpoint();
      const res = await fetch(healthUrl, { signal: AbortSignal.any([signal, AbortSignal.timeout(2_000)]) }).catch(() => undefined);
      if (res?.status === 200) break;
      if (Date.now() > deadline) throw new StartupError(`The API did not answer 200 on ${healthUrl} within 120 s.`);
    }
    for (const child of children) child.markStarted();

    const rows: Array<[string, string]> = [
      ['Console', `${baseUrl}/`],
      ['API', `${baseUrl}/api`],
      ['Docs', `${baseUrl}/api/docs`],
      ['OpenAPI', `${baseUrl}/api/openapi.json`],
      ...(temporalUi ? [['Temporal UI', temporalUi] as [string, string]] : []),
      ['Temporal', temporalNote],
      ['Postgres', postgresNote],
      ...dataNotes,
    ];
    const lines = ['', 'Agent Platform is running:', ...rows.map(([label, value]) => `  ${label.padEnd(15)} ${value}`), '', 'Press Ctrl-C to stop.', ''];
    process.stdout.write(lines.join('\n') + '\n');

    await stopped.catch(() => {});
    if (failure) throw new StartupError(failure);
  } catch (err) {
    if (failure) {
      logError(failure);
      exitCode = 1;
    } else if (interrupted) {
      log('start-up interrupted');
    } else {
      limitShutdown(SHUTDOWN_LIMIT_MS.afterFailure);
      logError(err instanceof StartupError ? err.message : `start-up failed: ${(err as Error).stack ?? String(err)}`);
      exitCode = 1;
    }
    controller.abort();
  } finally {
    for (const resource of resources.reverse()) {
      stopping = resource.name;
      log(`stopping ${resource.name}`);
      await resource.stop().catch((err: Error) => logError(`stopping ${resource.name} failed: ${err.message}`));
    }
    releaseLock();
  }
  log(exitCode === 0 ? 'stopped' : 'stopped after a failure');
  return exitCode;
}

// Run as `node --import tsx scripts/dev-stack.ts` (npm start), not through the tsx CLI: the tsx CLI
// SIGKILLs its child when a Ctrl-C is not acknowledged within ~30 ms, which would cut the ordered shutdown short.
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    logError(`dev stack crashed: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  },
);

/**
 * For the dev server `npm start` runs: no TLS, no API key, and no profile of a Temporal config file
 * (a developer's own `~/.config/temporalio/temporal.toml` may name another cluster). Undefined values
 * are not passed to the child processes.
 */
function ownDevServerTemporalEnv(): NodeJS.ProcessEnv {
  const cleared: NodeJS.ProcessEnv = { TEMPORAL_CONFIG_FILE: path.join(DATA_DIR, 'no-temporal-config.toml') };
  for (const name of Object.keys(process.env)) {
    if (name === 'TEMPORAL_PROFILE' || name === 'TEMPORAL_API_KEY' || name.startsWith('TEMPORAL_TLS') || name.startsWith('TEMPORAL_GRPC_META_')) cleared[name] = undefined;
  }
  return cleared;
}
