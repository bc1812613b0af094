import { fork, spawn } from 'node:child_process';
import path from 'node:path';

const REPO_ROOT = path.join(__dirname, '..');

export interface ServerProcess {
  name: string;
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  /** CPU time (user + system, microseconds) the server process has used so far. */
  cpuMicros: () => Promise<number>;
  stop: () => Promise<void>;
}

type ChildMessage = { port: number } | { cpu: { user: number; system: number } };

/**
 * Starts `bench/<entry>` in its own Node process (`node --import tsx`), so the server under test has a
 * core of its own instead of sharing the event loop with the load generator. The child listens on a
 * free loopback port and reports it over IPC as `{ port }`; it exits on SIGTERM or when we go away.
 */
export async function startServer(name: string, entry: string, env: Record<string, string>): Promise<ServerProcess> {
  // BENCH_CPU_PROF=<dir>: V8 CPU profiles of each server in <dir>/<name>/ when it exits. There is one
  // file per thread (tsx's module loader runs in a thread of its own); the largest is the main thread.
  const profileDir = process.env.BENCH_CPU_PROF;
  const child = fork(path.join(__dirname, entry), [], {
    cwd: REPO_ROOT,
    execArgv: ['--import', 'tsx', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, name)}`] : [])],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} server did not start within 60 s`)), 60_000);
    child.once('message', (message: ChildMessage) => {
      clearTimeout(timer);
      if ('port' in message) resolve(message.port);
      else reject(new Error(`${name} server sent an unexpected message: ${JSON.stringify(message)}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} server exited before listening (code ${code}, signal ${signal})`));
    });
  }).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });

  return {
    name,
    baseUrl: `http://127.0.0.1:${port}`,
    cpuMicros: () =>
      new Promise<number>((resolve, reject) => {
        child.once('message', (message: ChildMessage) => {
          if ('cpu' in message) resolve(message.cpu.user + message.cpu.system);
          else reject(new Error(`${name} server sent an unexpected message: ${JSON.stringify(message)}`));
        });
        child.send({ cpu: true });
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      // A profiled process writes its profile as it exits: give it time (a SIGKILL would lose it).
      const force = setTimeout(() => child.kill('SIGKILL'), profileDir ? 60_000 : 10_000);
      await exited;
      clearTimeout(force);
    },
  };
}

/** For the children: report the port to the parent, and close once on SIGTERM/SIGINT or when the parent goes away. */
export function serveUnderParent(port: number, close: () => Promise<void>): void {
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(1), 10_000).unref();
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.on('disconnect', shutdown);
  const send = process.send?.bind(process);
  if (!send) throw new Error('bench servers are started by bench/run.ts (they need an IPC channel)');
  process.on('message', () => send({ cpu: process.cpuUsage() }));
  send({ port });
}

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

export interface EntryProcess {
  pid: number;
  /** Everything the process printed so far (for a failure's message). */
  output: () => string;
  /** Resolves once a line containing `text` has been printed; rejects if the process exits first or after timeoutMs. */
  printed: (text: string, timeoutMs?: number) => Promise<void>;
  /** SIGTERM (the entries' ordered shutdown), SIGKILL after 10 s (60 s with BENCH_CPU_PROF). */
  stop: () => Promise<void>;
}

/**
 * Starts one of the production entries (`api/server.ts`, `worker/main.ts`) as its own process, as `npm
 * start` does (`node --import tsx <entry>`), configured by `env` alone: the bench then measures the
 * processes a deployment runs, not a copy of their wiring.
 */
export function startEntry(entry: string, env: Record<string, string>): EntryProcess {
  // BENCH_CPU_PROF=<dir>: a V8 CPU profile of the process in <dir>/<its folder: worker, api>/ when it exits.
  const profileDir = process.env.BENCH_CPU_PROF;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, path.basename(path.dirname(entry)))}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
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
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
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
        const check = () => {
          if (output.includes(text)) done();
        };
        const onExit = () => done(new Error(`${entry} exited before printing "${text}":\n${output}`));
        const timer = setTimeout(() => done(new Error(`${entry} did not print "${text}" within ${timeoutMs} ms:\n${output}`)), timeoutMs);
        waiters.add(check);
        child.once('exit', onExit);
        check();
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      // A profiled process writes its profile as it exits: give it time (a SIGKILL would lose it).
      const force = setTimeout(() => child.kill('SIGKILL'), profileDir ? 60_000 : 10_000);
      await exited;
      clearTimeout(force);
    },
  };
}

/**
 * The engine's environment in a bench: its database and dev server, the bench's own secrets, loopback
 * targets allowed (receivers run on loopback); with `port`, an API's address too (for the API and worker
 * processes a bench starts). `loadConfig` takes it as it is for an in-process engine.
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

/** A bench setting from the environment: a non-negative integer, `fallback` when unset or empty. */
/** BENCH_DYNAMIC_CONFIG: comma-separated `key=value` dynamic config for a bench's dev server. */
export const benchDynamicConfig = (): string[] => (process.env.BENCH_DYNAMIC_CONFIG ?? '').split(',').filter(Boolean);

export function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}
