import { spawn } from 'node:child_process';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { dropDatabase, ensureDatabase, urlForDatabase } from '../../db/admin';
import { runMigrations } from '../../db/migrate';
import { createPool, type Db } from '../../db/pool';
import { loadConfig, type Config } from '../../lib/config';
import { findFreePort } from '../../scripts/processes';
import { startTemporalDevServer } from '../../scripts/temporal-dev-server';
import { bundleWorkflows, createEngineWorker, type EngineWorker } from '../../worker/worker';
import { waitForHttp } from './api-client';
import { temporalServerPid } from './cpu';
import { listSetting } from './settings';
import { sqlCounter } from './sql-counts';

/**
 * The pieces a bench's stack is built from: a fresh database, a Temporal dev server, the production entries
 * as processes (API, worker) or the engine in this process, and a bare Temporal worker for the baselines.
 * Every bench that measures our code against bare Temporal builds both sides here, the same way.
 */

const REPO_ROOT = path.join(__dirname, '..', '..');

/** Steps to undo at the end of a bench, last first; each runs even when another failed. */
export class Cleanups {
  private steps: Array<() => unknown> = [];
  push(step: () => unknown): void {
    this.steps.push(step);
  }
  async run(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (err) {
        console.error(`cleanup: ${(err as Error).message}`);
      }
    }
  }
}

/** A fresh, migrated database `bench_<pid>` on BENCH_POSTGRES_URL's server, else DATABASE_URL's, else local trust auth. */
export async function createBenchDatabase(): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const server = process.env.BENCH_POSTGRES_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `bench_${process.pid}`;
  const url = urlForDatabase(server, name);
  await dropDatabase(url); // a leftover from a killed run with the same pid
  await ensureDatabase(url);
  await runMigrations(url);
  return { name, url, drop: () => dropDatabase(url) };
}

export interface DevServer {
  address: string;
  /** The server's Prometheus endpoint. */
  metricsUrl: string;
  /** Its process (for the CPU meters), when it could be found. */
  pid: number | undefined;
  stop: () => Promise<void>;
}

/**
 * A Temporal dev server as `npm start` and the tests run it (scripts/temporal-dev-server.ts: fairness on,
 * search attributes registered), quiet, on free ports; in memory unless `file` names its SQLite file.
 * BENCH_DYNAMIC_CONFIG (comma-separated `key=value`) adds dynamic config.
 */
export async function startDevServer(options: { file?: string; retention?: string; sqlitePragmas?: string[] } = {}): Promise<DevServer> {
  const metricsPort = await findFreePort();
  const server = await startTemporalDevServer({
    port: await findFreePort(),
    metricsPort,
    dbFilename: options.file,
    retention: options.retention,
    sqlitePragmas: options.sqlitePragmas,
    dynamicConfig: listSetting('BENCH_DYNAMIC_CONFIG', ''),
    onLine: () => {},
    log: () => {},
  });
  return { address: server.address, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, pid: temporalServerPid(), stop: () => server.stop() };
}

/**
 * The engine's environment in a bench: its database and dev server, the bench's own secrets, loopback
 * targets allowed (receivers run on loopback); with `port`, an API's address too.
 */
export function benchEnv(databaseUrl: string, temporalAddress: string, port?: number): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    ...(port === undefined ? {} : { PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }),
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
    ALLOW_PRIVATE_TARGETS: 'true',
  };
}

/** BENCH_CPU_PROF=<dir>: node flags for a V8 CPU profile of a process in <dir>/<name>/, written when it exits. */
export function profileFlags(name: string): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, name)}`] : [];
}

/** SIGTERM, then SIGKILL after 10 s (60 s when profiling: a profile is written as the process exits). */
export async function stopChild(child: import('node:child_process').ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const force = setTimeout(() => child.kill('SIGKILL'), process.env.BENCH_CPU_PROF ? 60_000 : 10_000);
  await exited;
  clearTimeout(force);
}

export interface EntryProcess {
  pid: number;
  /** Everything the process printed so far (for a failure's message). */
  output: () => string;
  /** Resolves once a line containing `text` has been printed; rejects if the process exits first or after timeoutMs. */
  printed: (text: string, timeoutMs?: number) => Promise<void>;
  stop: () => Promise<void>;
}

/**
 * One of the production entries (`api/server.ts`, `worker/main.ts`) as its own process, as `npm start`
 * runs it (`node --import tsx <entry>`), configured by `env` alone: the bench measures the processes a
 * deployment runs, not a copy of their wiring.
 */
export function startEntry(entry: string, env: Record<string, string>): EntryProcess {
  const counter = sqlCounter();
  const child = spawn(process.execPath, [...profileFlags(path.basename(path.dirname(entry))), '--import', 'tsx', ...counter.flags, entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...counter.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const check of waiters) check();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  return {
    pid: child.pid!,
    output: () => output,
    printed: (text, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        const done = (err?: Error) => {
          waiters.delete(check);
          clearTimeout(timer);
          child.off('exit', onExit);
          if (err) reject(err);
          else resolve();
        };
        const check = () => void (output.includes(text) && done());
        const onExit = () => done(new Error(`${entry} exited before printing "${text}":\n${output}`));
        const timer = setTimeout(() => done(new Error(`${entry} did not print "${text}" within ${timeoutMs} ms:\n${output}`)), timeoutMs);
        waiters.add(check);
        child.once('exit', onExit);
        check();
      }),
    stop: () => stopChild(child),
  };
}

export interface ProcessStack {
  /** http://127.0.0.1:<port> of the API. */
  base: string;
  api: () => EntryProcess;
  worker: () => EntryProcess;
  /** SIGKILL that process and start it again (as `npm start`'s supervisor does); resolves once it serves. */
  restart: (which: 'api' | 'worker') => Promise<void>;
  stop: () => Promise<void>;
}

/**
 * The API and worker processes `npm start` runs, on the given database and dev server, with `env` over
 * the bench's defaults (LOG_LEVEL warn); resolves once the worker polls and the API answers.
 */
export async function startApiAndWorker(databaseUrl: string, temporalAddress: string, env: Record<string, string> = {}): Promise<ProcessStack> {
  const port = await findFreePort();
  const base = `http://127.0.0.1:${port}`;
  const fullEnv = { ...benchEnv(databaseUrl, temporalAddress, port), LOG_LEVEL: 'warn', ...env };
  const procs: { api?: EntryProcess; worker?: EntryProcess } = {};
  const start = {
    worker: async () => {
      procs.worker = startEntry('worker/main.ts', fullEnv);
      await procs.worker.printed('[worker] polling task queue', 120_000);
    },
    api: async () => {
      procs.api = startEntry('api/server.ts', fullEnv);
      await waitForHttp(`${base}/api/health`, (s) => s === 200, 120_000);
    },
  };
  const stop = async () => {
    await procs.api?.stop();
    await procs.worker?.stop();
  };
  try {
    await Promise.all([start.worker(), start.api()]);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    base,
    api: () => procs.api!,
    worker: () => procs.worker!,
    restart: async (which) => {
      const proc = procs[which]!;
      process.kill(proc.pid, 'SIGKILL');
      await proc.stop(); // waits for the exit
      await start[which]();
    },
    stop,
  };
}

export interface InProcessEngine {
  db: Db;
  config: Config;
  connection: NativeConnection;
  engine: EngineWorker;
  client: Client;
  stop: () => Promise<void>;
}

/**
 * The worker's engine (both workers, the hand-off, the reconciler) in this process, on the given database
 * and dev server, with `env` over the bench's environment and worker options over ours for tuning runs.
 */
export async function startInProcessEngine(
  databaseUrl: string,
  temporalAddress: string,
  env: Record<string, string>,
  tuning: { main?: Partial<WorkerOptions>; deliveries?: Partial<WorkerOptions> } = {},
): Promise<InProcessEngine> {
  const db = createPool(databaseUrl, 20);
  const config = loadConfig({ ...benchEnv(databaseUrl, temporalAddress), ...env });
  const connection = await NativeConnection.connect({ address: temporalAddress });
  const engine = await createEngineWorker({ connection, config, db, workflowBundle: await bundleWorkflows(), log: () => {}, tuning });
  const running = engine.run();
  return {
    db,
    config,
    connection,
    engine,
    client: engine.client,
    stop: async () => {
      engine.shutdown();
      await running.catch(() => {});
      await connection.close();
      await db.end();
    },
  };
}

/** A bare Temporal worker for a bench's baseline: `workflowsPath`'s workflows and `activities`, nothing of ours. */
export async function startBareWorker(options: {
  connection: NativeConnection;
  taskQueue: string;
  workflowsPath: string;
  activities: object;
  tuning?: Partial<WorkerOptions>;
}): Promise<{ stop: () => Promise<void> }> {
  const worker = await Worker.create({
    ...options.tuning,
    connection: options.connection,
    namespace: 'default',
    taskQueue: options.taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: options.workflowsPath, logger: new DefaultLogger('WARN') }),
    activities: options.activities,
  });
  const running = worker.run();
  return {
    stop: async () => {
      worker.shutdown();
      await running.catch(() => {});
    },
  };
}
