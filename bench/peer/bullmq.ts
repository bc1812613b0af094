import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findFreePort } from '../../scripts/processes';
import { processTree } from '../kit/cpu';
import { startEntry, type Cleanups, type EntryProcess } from '../kit/stack';
import type { Stack } from './stack';

/**
 * `bench:peer`'s BullMQ stack: a Redis of its own (`redis-server` from PATH, BENCH_REDIS_SERVER to name
 * another) on a free port and a temporary directory, with its append-only file fsynced every second
 * (`--appendonly yes --appendfsync everysec`, no RDB snapshots), and the Fastify + BullMQ server
 * (bench/peer/bullmq-server.ts) as its own process (`node --import tsx`, BENCH_CPU_PROF profiles it in
 * `<dir>/peer/`). Its CPU is the server's and redis-server's. `kill('bullmq')` SIGKILLs the server,
 * `kill('redis')` Redis (restarted on the same directory: it reloads its append-only file).
 */
export async function startBullmq(target: { url: string; secret: string }, cleanups: Cleanups): Promise<Stack> {
  const redisBin = process.env.BENCH_REDIS_SERVER || 'redis-server';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'peer-bullmq-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const redisPort = await findFreePort();
  let redis: ChildProcess | undefined;
  const startRedis = async () => {
    let output = '';
    const child = spawn(
      redisBin,
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--logfile', ''],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    redis = child;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start within 30 s:\n${output}`)), 30_000);
      const onData = (c: Buffer) => {
        output += c.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`${redisBin} could not be started (${err.message}); BENCH_REDIS_SERVER names another, or leave bullmq out of BENCH_STACKS`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (code ${code}, signal ${signal}):\n${output}`));
      });
    });
  };
  const stopRedis = async () => {
    const c = redis;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    const force = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(force);
  };
  await startRedis();
  cleanups.push(stopRedis);

  const port = await findFreePort();
  const hookId = 'peer-hook';
  const env = { PORT: String(port), REDIS_PORT: String(redisPort), HOOK_ID: hookId, TARGET_URL: target.url, TARGET_SECRET: target.secret };
  let server: EntryProcess | undefined;
  const startServer = async () => {
    server = startEntry('bench/peer/bullmq-server.ts', env);
    await server.printed('[bullmq-peer] listening', 60_000);
  };
  await startServer();
  cleanups.push(() => server?.stop());

  const alive = (c: ChildProcess | undefined) => c?.pid !== undefined && c.exitCode === null && c.signalCode === null;
  return {
    name: 'bullmq',
    hookUrl: `http://127.0.0.1:${port}/hooks/${hookId}`,
    pids: () => [...(server ? [server.pid] : []), ...(alive(redis) ? processTree(redis!.pid!) : [])],
    kill: async (which) => {
      if (which === 'redis') {
        const c = redis!;
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGKILL');
        await exited;
        await startRedis();
        return;
      }
      process.kill(server!.pid, 'SIGKILL');
      await server!.stop(); // waits for the exit
      await startServer();
    },
    stop: async () => {
      await server?.stop();
      await stopRedis();
    },
  };
}
