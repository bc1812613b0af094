import { fork } from 'node:child_process';
import path from 'node:path';
import { sqlCounter, sqlCounts } from './sql-counts';
import { profileFlags, stopChild } from './stack';

/**
 * HTTP servers under load in processes of their own (`npm run bench`): the server under test gets a core
 * of its own instead of sharing the event loop with the load generator. The child listens on a free
 * loopback port, reports it over IPC as `{ port }`, answers `{ cpu }` when asked, and exits on SIGTERM
 * or when the parent goes away.
 */

export interface ChildServer {
  name: string;
  /** The server's process id. */
  pid: number;
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  /** CPU time (user + system, microseconds) the server process has used so far. */
  cpuMicros: () => Promise<number>;
  /** SQL statements the server has sent so far (bench/kit/sql-counter.cjs). */
  statements: () => Promise<number>;
  stop: () => Promise<void>;
}

type ChildMessage = { port: number } | { cpu: { user: number; system: number } };

/** Starts `bench/<entry>` (`node --import tsx`) with `env` over ours; BENCH_CPU_PROF profiles it in `<dir>/<name>/`. */
export async function startChildServer(name: string, entry: string, env: Record<string, string>): Promise<ChildServer> {
  const counter = sqlCounter();
  const child = fork(path.join(__dirname, '..', entry), [], {
    cwd: path.join(__dirname, '..', '..'),
    execArgv: ['--import', 'tsx', ...counter.flags, ...profileFlags(name)],
    env: { ...process.env, ...counter.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
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
    pid: child.pid!,
    baseUrl: `http://127.0.0.1:${port}`,
    cpuMicros: () =>
      new Promise<number>((resolve, reject) => {
        child.once('message', (message: ChildMessage) => {
          if ('cpu' in message) resolve(message.cpu.user + message.cpu.system);
          else reject(new Error(`${name} server sent an unexpected message: ${JSON.stringify(message)}`));
        });
        child.send({ cpu: true });
      }),
    statements: async () => [...(await sqlCounts(child.pid!)).values()].reduce((a, b) => a + b, 0),
    stop: () => stopChild(child),
  };
}

/** In the child: report the port to the parent, answer CPU readings, close once on SIGTERM/SIGINT or when the parent goes away. */
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
