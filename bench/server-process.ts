import { fork } from 'node:child_process';
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
      const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
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
