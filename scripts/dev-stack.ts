import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureDatabase } from '../db/admin';
import { runMigrations } from '../db/migrate';
import { loadOrCreateDevSecrets } from './dev-secrets';
import { startEmbeddedPostgres } from './embedded-postgres';
import { findTemporalCli } from './temporal-cli';
import { canConnect, describeExit, isAlive, isPortFree, prefixedPrinter, sleep, startSupervised, type SupervisedProcess } from './processes';
import { startTemporalDevServer } from './temporal-dev-server';

/**
 * `npm start` (DESIGN §6): Postgres (DATABASE_URL or embedded), the Temporal dev server (or
 * TEMPORAL_ADDRESS), migrations, the worker and the API, in one command; prints the URLs; stops
 * everything in order on Ctrl-C (API, worker, Temporal, Postgres).
 *
 * Every child runs in its own process group, so a terminal Ctrl-C reaches only this process, which then
 * stops the children in order; each child also has a watchdog that kills it if this process dies.
 */

const ROOT = path.resolve(__dirname, '..');
const DATA_DIR = path.join(ROOT, '.data');
const LOCK_FILE = path.join(DATA_DIR, 'dev-stack.pid');
const TEMPORAL_PORT = 7233;
const TEMPORAL_UI_PORT = 8233;

const say = prefixedPrinter('dev', 1);
const log = (message: string) => say(message, 'stdout');
const logError = (message: string) => say(message, 'stderr');

interface Resource {
  name: string;
  stop(): Promise<void>;
}

class StartupError extends Error {
  override name = 'StartupError';
}

function rel(p: string): string {
  return path.relative(process.cwd(), p) || '.';
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** Whether pid is a dev stack (and not an unrelated process that got a stale lock's pid). */
function looksLikeDevStack(pid: number): boolean {
  try {
    return execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).includes('dev-stack');
  } catch {
    return true; // cannot tell: err on the side of not running twice
  }
}

/** One dev stack per `.data/`: a second one would fight the first over Postgres and the ports. */
function acquireLock(): () => void {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  try {
    const other = Number.parseInt(fs.readFileSync(LOCK_FILE, 'utf8'), 10);
    if (Number.isInteger(other) && other !== process.pid && isAlive(other) && looksLikeDevStack(other)) {
      throw new StartupError(`Another \`npm start\` is already running on ${rel(DATA_DIR)} (pid ${other}). Stop it first (Ctrl-C in its terminal, or kill -INT ${other}).`);
    }
  } catch (err) {
    if (err instanceof StartupError) throw err;
  }
  fs.writeFileSync(LOCK_FILE, `${process.pid}\n`);
  return () => {
    try {
      if (fs.readFileSync(LOCK_FILE, 'utf8').trim() === String(process.pid)) fs.rmSync(LOCK_FILE);
    } catch {
      // already gone
    }
  };
}

async function requireFreePort(host: string, port: number, what: string, hint: string): Promise<void> {
  if (!(await isPortFree(host, port))) {
    throw new StartupError(`Port ${port} on ${host} is already in use, so ${what} cannot start there. ${hint}`);
  }
}

/** Host to probe and host to show for the API's listen address. */
function apiHosts(host: string): { probe: string; display: string } {
  if (host === '0.0.0.0' || host === '127.0.0.1' || host === 'localhost') return { probe: '127.0.0.1', display: 'localhost' };
  if (host === '::' || host === '::1') return { probe: '::1', display: 'localhost' };
  const bracketed = host.includes(':') ? `[${host}]` : host;
  return { probe: host, display: bracketed };
}

async function main(): Promise<number> {
  const controller = new AbortController();
  const { signal } = controller;
  const resources: Resource[] = [];
  let interruptedBy: NodeJS.Signals | undefined;
  let failure: string | undefined;

  const fail = (message: string) => {
    if (signal.aborted) return;
    failure = message;
    controller.abort();
  };
  const onSignal = (sig: NodeJS.Signals) => {
    if (signal.aborted) {
      log(`${sig} received again; already shutting down (each step has a time limit)`);
      return;
    }
    interruptedBy = sig;
    log(`${sig} received; shutting down`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  process.on('uncaughtException', (err) => {
    logError(`unexpected error: ${err.stack ?? err.message}`);
    fail('unexpected error in the dev stack');
  });

  /** Children stopping on their own (not through our shutdown) bring the whole stack down. */
  const watch = (proc: SupervisedProcess) => {
    void proc.exited.then((info) => fail(`${proc.name} ${describeExit(info)} unexpectedly`));
  };

  let releaseLock = () => {};
  let exitCode = 0;
  try {
    releaseLock = acquireLock();

    // Preflight: everything that can fail cheaply, before anything is started.
    const host = process.env.HOST || '127.0.0.1';
    const port = Number(process.env.PORT || 3000);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new StartupError(`PORT=${process.env.PORT} is not a valid port.`);
    const hosts = apiHosts(host);
    const baseUrl = `http://${hosts.display}:${port}`;
    for (const entry of ['worker/main.ts', 'api/server.ts']) {
      if (!fs.existsSync(path.join(ROOT, entry))) throw new StartupError(`${entry} does not exist (yet); cannot start it.`);
    }
    await requireFreePort(hosts.probe, port, 'the API', 'Stop whatever holds it, or choose another port with PORT=…');
    let temporalCli: string | null = null;
    if (!process.env.TEMPORAL_ADDRESS) {
      await requireFreePort('127.0.0.1', TEMPORAL_PORT, 'the Temporal dev server', `If a Temporal server is already running there, use it: TEMPORAL_ADDRESS=127.0.0.1:${TEMPORAL_PORT} npm start. Otherwise stop whatever holds the port.`);
      await requireFreePort('127.0.0.1', TEMPORAL_UI_PORT, 'the Temporal UI', 'Stop whatever holds the port, or set TEMPORAL_ADDRESS to use a Temporal server you run yourself.');
      try {
        temporalCli = findTemporalCli() ?? null; // null: the SDK downloads a dev server instead
      } catch (err) {
        throw new StartupError((err as Error).message);
      }
    }

    // Secrets.
    const secrets = loadOrCreateDevSecrets(DATA_DIR);
    const dataNotes: Array<[label: string, value: string]> = [];
    if (secrets.file) dataNotes.push(['Secrets', rel(secrets.file)]);

    // Postgres.
    let databaseUrl = process.env.DATABASE_URL || undefined;
    let postgresNote: string;
    if (databaseUrl) {
      postgresNote = `${redactUrl(databaseUrl)} (from DATABASE_URL)`;
    } else {
      log('starting embedded Postgres');
      const postgres = await startEmbeddedPostgres({
        dataDir: path.join(DATA_DIR, 'postgres'),
        database: 'agent_platform',
        signal,
        log: (m) => log(m),
      });
      resources.push({ name: 'postgres', stop: postgres.stop });
      watch(postgres.process);
      databaseUrl = postgres.url;
      postgresNote = `${postgres.url} (embedded)`;
      dataNotes.push(['Postgres data', rel(postgres.dataDir)]);
    }
    if (signal.aborted) throw new StartupError('interrupted');

    // Migrations.
    log('applying database migrations');
    try {
      await ensureDatabase(databaseUrl);
      await runMigrations(databaseUrl);
    } catch (err) {
      if (signal.aborted) throw err;
      throw new StartupError(`Could not prepare the database at ${redactUrl(databaseUrl)}: ${(err as Error).message}`);
    }
    if (signal.aborted) throw new StartupError('interrupted');

    // Temporal.
    let temporalAddress = process.env.TEMPORAL_ADDRESS || undefined;
    let temporalNote: string;
    let temporalUi: string | undefined;
    if (temporalAddress) {
      temporalNote = `${temporalAddress} (from TEMPORAL_ADDRESS)`;
      const colon = temporalAddress.lastIndexOf(':');
      if (!(await canConnect(temporalAddress.slice(0, colon).replace(/^\[|\]$/g, ''), Number(temporalAddress.slice(colon + 1)), 3_000))) {
        logError(`warning: nothing answers at TEMPORAL_ADDRESS=${temporalAddress} yet; the worker will keep retrying`);
      }
    } else {
      const dbFilename = path.join(DATA_DIR, 'temporal.db');
      const temporal = await startTemporalDevServer({
        ip: '127.0.0.1',
        port: TEMPORAL_PORT,
        uiPort: TEMPORAL_UI_PORT,
        dbFilename,
        namespace: process.env.TEMPORAL_NAMESPACE || 'default',
        cliPath: temporalCli,
        signal,
        log: (m) => log(m),
      });
      resources.push({ name: 'temporal', stop: temporal.stop });
      if (temporal.process) watch(temporal.process);
      temporalAddress = temporal.address;
      temporalNote = `${temporal.address} (dev server)`;
      temporalUi = temporal.uiUrl;
      dataNotes.push(['Temporal data', rel(dbFilename)]);
    }
    if (signal.aborted) throw new StartupError('interrupted');

    // Worker and API.
    const childEnv: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      JWT_SECRET: secrets.JWT_SECRET,
      SECRETS_KEY: secrets.SECRETS_KEY,
      ALLOW_PRIVATE_TARGETS: process.env.ALLOW_PRIVATE_TARGETS || 'true',
      PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL || baseUrl,
    };
    const startNode = async (name: string, entry: string, color: number) => {
      const proc = await startSupervised({
        name,
        command: process.execPath,
        args: ['--import', 'tsx', entry],
        cwd: ROOT,
        env: childEnv,
        stopSignal: 'SIGTERM',
        stopTimeoutMs: 10_000,
        onLine: prefixedPrinter(name, color),
      });
      resources.push({ name, stop: async () => void (await proc.stop()) });
      watch(proc);
      return proc;
    };
    log('starting the worker and the API');
    await startNode('worker', 'worker/main.ts', 33);
    await startNode('api', 'api/server.ts', 32);

    const healthUrl = `http://${hosts.probe.includes(':') ? `[${hosts.probe}]` : hosts.probe}:${port}/api/health`;
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (signal.aborted) throw new StartupError('interrupted');
      try {
        const res = await fetch(healthUrl, { signal: AbortSignal.any([signal, AbortSignal.timeout(2_000)]) });
        if (res.status === 200) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new StartupError(`The API did not answer 200 on ${healthUrl} within 120 s.`);
      await sleep(250, signal).catch(() => {});
    }

    const rows: Array<[string, string]> = [
      ['API', `${baseUrl}/api`],
      ['Docs', `${baseUrl}/api/docs`],
      ['OpenAPI', `${baseUrl}/api/openapi.json`],
      ...(temporalUi ? [['Temporal UI', temporalUi] as [string, string]] : []),
      ['Temporal', temporalNote],
      ['Postgres', postgresNote],
      ...dataNotes,
    ];
    const lines = [
      '',
      'Agent Platform is running:',
      ...rows.map(([label, value]) => `  ${label.padEnd(15)} ${value}`),
      '',
      'Press Ctrl-C to stop.',
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');

    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    if (failure) {
      logError(failure);
      exitCode = 1;
    }
  } catch (err) {
    if (failure) {
      logError(failure);
      exitCode = 1;
    } else if (interruptedBy) {
      log('start-up interrupted');
    } else {
      logError(err instanceof StartupError ? err.message : `start-up failed: ${(err as Error).stack ?? String(err)}`);
      exitCode = 1;
    }
    if (!signal.aborted) controller.abort();
  } finally {
    for (const resource of resources.reverse()) {
      log(`stopping ${resource.name}`);
      try {
        await resource.stop();
      } catch (err) {
        logError(`stopping ${resource.name} failed: ${(err as Error).message}`);
      }
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
