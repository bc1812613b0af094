/**
 * `npm run bench:streams`: what idle live run streams (GET /api/runs/:id/events) cost the API process.
 * The real API (bench/serve-api.ts) runs in a process of its own, its Temporal address a silent port so
 * that every run stays queued and its stream stays open, sending only heartbeats. BENCH_STREAM_ACCOUNTS
 * accounts (40) each open BENCH_STREAMS_PER_ACCOUNT streams (50: RUN_STREAMS_PER_ACCOUNT's default) of
 * one queued run; the server's resident memory (VmRSS) is read before and after, and per stream.
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient } from './kit/api-client';
import { startChildServer } from './kit/child-server';
import { setting } from './kit/settings';
import { Cleanups, createBenchDatabase } from './kit/stack';

const ACCOUNTS = setting('BENCH_STREAM_ACCOUNTS', 40);
const PER_ACCOUNT = setting('BENCH_STREAMS_PER_ACCOUNT', 50);

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
}

/** A TCP port that accepts and never answers: the API's Temporal client waits there, so runs stay queued. */
async function silentPort(cleanups: Cleanups): Promise<string> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    sockets.forEach((s) => s.destroy());
    server.close();
  });
  return `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

/** Opens the stream and answers once its headers came (the request stays open). */
function openStream(base: string, runId: string, token: string): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/api/runs/${runId}/events`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
      res.on('data', () => {});
      res.on('error', () => {});
      resolve(req);
    });
    req.on('error', reject);
  });
}

async function main() {
  const cleanups = new Cleanups();
  try {
    const database = await createBenchDatabase();
    cleanups.push(database.drop);
    const total = ACCOUNTS * PER_ACCOUNT;
    const server = await startChildServer('api', 'serve-api.ts', {
      BENCH_DATABASE_URL: database.url,
      BENCH_TEMPORAL_ADDRESS: await silentPort(cleanups),
      RUN_STREAMS_PER_USER: String(PER_ACCOUNT),
      RUN_STREAMS_PER_ACCOUNT: String(PER_ACCOUNT),
      RUN_STREAMS_PER_PROCESS: String(Math.max(total, 2000)),
      RUN_EVENTS_HEARTBEAT_MS: '15000',
      AUTH_RATE_LIMIT_MAX: '1000',
    });
    cleanups.push(server.stop);
    const users: { token: string; runId: string }[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const client = new ApiClient(server.baseUrl);
      const token = await client.register(`streams-${i}-${process.pid}@bench.test`);
      const agent = await client.request<{ id: string }>('POST', '/api/agents', { name: 'streamed' });
      const run = await client.request<{ id: string }>('POST', `/api/agents/${agent.id}/runs`, { input: 'go' });
      users.push({ token, runId: run.id });
    }
    await sleep(2000);
    const before = await rssKiB(server.pid);
    const open: http.ClientRequest[] = [];
    cleanups.push(() => open.forEach((req) => req.destroy()));
    for (const user of users) {
      open.push(...(await Promise.all(Array.from({ length: PER_ACCOUNT }, () => openStream(server.baseUrl, user.runId, user.token)))));
    }
    await sleep(5000);
    const after = await rssKiB(server.pid);
    const mib = (kib: number) => (kib / 1024).toFixed(1);
    console.log(`${open.length} idle streams (${ACCOUNTS} accounts × ${PER_ACCOUNT}): API RSS ${mib(before)} MiB before, ${mib(after)} MiB after: ${(((after - before) * 1024) / open.length / 1024).toFixed(1)} KiB per stream`);
  } finally {
    await cleanups.run();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
