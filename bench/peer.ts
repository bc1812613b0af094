/**
 * `npm run bench:peer`: our `npm start` stack beside n8n and beside Fastify + BullMQ on the same machine, in
 * the same run, on the same job — a public hook whose body must reach a loopback receiver:
 * - ours: the processes `npm start` runs — `api/server.ts` and `worker/main.ts` (each `node --import tsx`),
 *   a Temporal dev server on a SQLite file (retention 15 minutes, as scripts/dev-stack.ts starts it) and a fresh
 *   database `bench_<pid>` (bench/kit/stack.ts) — with an incoming webhook (`POST /api/hooks/webhooks/:id`
 *   → `webhook.received`) and an outgoing webhook with a secret subscribed to `webhook.received`;
 * - n8n: `n8n start` (version BENCH_N8N_VERSION, installed with `npm install n8n@<version>` into
 *   `.data/peer/n8n` when absent — never a dependency of ours) on its default SQLite database in a temporary
 *   N8N_USER_FOLDER, offline (diagnostics, version notifications, templates, personalization off), with one
 *   workflow imported and activated through its CLI (`import:workflow`, `update:workflow --active=true`):
 *   Webhook node (POST, respond immediately) → HTTP Request node POSTing the body to the receiver;
 * - bullmq: what a Node team would build for it in an afternoon (bench/peer/bullmq-server.ts, started by
 *   bench/peer/bullmq.ts): Fastify queueing a BullMQ job per hook on a Redis of its own with its append-only
 *   file fsynced every second, and a BullMQ worker POSTing it signed (Standard Webhooks), retried as BullMQ does.
 * Every hook request carries a unique `seq`; the receiver records its first arrival and counts repeats
 * (and, for ours, whether a repeat carried the same `webhook-id`, which a receiver de-duplicates).
 *
 * Phases, each stack in turn (alternating which goes first each round), after a warm-up of 20 hooks each:
 * - burst: BENCH_BURST hooks sent as fast as BENCH_IN_FLIGHT concurrent requests allow; messages/s from the
 *   first request to the last arrival;
 * - paced: BENCH_RATES hooks per second for BENCH_PACED_SECONDS each; p50/p99 from sending the request to
 *   the arrival at the receiver (one not arrived counts as infinitely late).
 * CPU per message: user + system time (/proc/<pid>/stat) over the phase of every process of the stack —
 * ours: the API, the worker, the Temporal dev server and the Postgres backends connected to `bench_<pid>`
 * (not Postgres's shared background processes); n8n: its process and all its descendants (task runner);
 * bullmq: its server process and redis-server. SQL statements per message: ours' API and worker
 * (bench/kit/sql-counter.cjs; BENCH_SQL=1 prints them by text, per message, after each of ours' phases).
 * Late: accepted (2xx) and not received BENCH_SETTLE_SECONDS after the phase's last arrival (the next phase
 * starts then); lost: accepted in any phase and not received at the end of the run, after up to
 * BENCH_FINAL_SETTLE_SECONDS without an arrival; duplicated: a seq received more than once.
 * Then BENCH_KILL (comma list of `worker`, `api`, `n8n`, `bullmq` (its server), `redis`; empty for none): a
 * burst of BENCH_KILL_BURST during which that process is SIGKILLed once a third of the hooks were accepted
 * and started again at once (what the dev stack's supervisor does; n8n has none), and what was lost or
 * duplicated.
 * BENCH_ROUNDS rounds; the table shows medians. HOOK_RATE_LIMIT and FIRES_PER_MINUTE are raised to
 * 1000000 for our processes (the default 50 hook requests/s would answer the burst 429); other engine
 * variables pass through from the environment. Settings: BENCH_N8N_VERSION (1.123.81), BENCH_BURST (500),
 * BENCH_IN_FLIGHT (50), BENCH_RATES (10,50), BENCH_PACED_SECONDS (10), BENCH_ROUNDS (1), BENCH_KILL
 * (worker,api,n8n,bullmq), BENCH_KILL_BURST (300), BENCH_SETTLE_SECONDS (30), BENCH_FINAL_SETTLE_SECONDS (120), BENCH_STACKS
 * (ours,n8n,bullmq), BENCH_SQL, BENCH_PG_STATEMENTS (bench/peer/pg-statements.ts: ours on a Postgres of its own, and
 * Postgres's execution time per message by statement after each phase), BENCH_REDIS_SERVER (redis-server),
 * BENCH_POSTGRES_URL (as bench/kit/stack.ts).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { findFreePort } from '../scripts/processes';
import { DEV_STACK_RETENTION } from '../scripts/temporal-dev-server';
import { ApiClient, postStatus, waitForHttp } from './kit/api-client';
import { cpuMeter, postgresBackendPids, processTree } from './kit/cpu';
import { startReceiver as startLoopbackReceiver } from './kit/receiver';
import { choiceSetting, listSetting, setting } from './kit/settings';
import { Cleanups, createBenchDatabase, startApiAndWorker, startDevServer } from './kit/stack';
import { sqlMeter, type SqlWindow } from './kit/sql-counts';
import { median, percentile } from './kit/stats';
import { startBullmq } from './peer/bullmq';
import { startStatementsPostgres, statementsWindow } from './peer/pg-statements';
import type { Stack, StackName } from './peer/stack';

const REPO_ROOT = path.join(__dirname, '..');
const N8N_DIR = path.join(REPO_ROOT, '.data', 'peer', 'n8n');

const N8N_VERSION = process.env.BENCH_N8N_VERSION || '1.123.81';
const BURST = Math.max(1, setting('BENCH_BURST', 500));
const IN_FLIGHT = Math.max(1, setting('BENCH_IN_FLIGHT', 50));
const RATES = listSetting('BENCH_RATES', '10,50').map(Number);
const PACED_SECONDS = Math.max(1, setting('BENCH_PACED_SECONDS', 10));
const ROUNDS = Math.max(1, setting('BENCH_ROUNDS', 1));
const KILLS = choiceSetting('BENCH_KILL', 'worker,api,n8n,bullmq', ['worker', 'api', 'n8n', 'bullmq', 'redis']);
const KILL_BURST = Math.max(3, setting('BENCH_KILL_BURST', 300));
const SETTLE_MS = setting('BENCH_SETTLE_SECONDS', 30) * 1000;
const FINAL_SETTLE_MS = setting('BENCH_FINAL_SETTLE_SECONDS', 120) * 1000;
const STACKS = choiceSetting<StackName>('BENCH_STACKS', 'ours,n8n,bullmq', ['ours', 'n8n', 'bullmq']);
const WARMUP = 20;
const SECRET = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;
for (const r of RATES) if (!(r > 0)) throw new Error(`BENCH_RATES must be positive numbers, got "${process.env.BENCH_RATES}"`);

// -------------------------------------------------------------------------------------------- receiver

interface Arrival {
  first: number;
  count: number;
  webhookIds: Set<string>;
}

/** The loopback endpoint every stack delivers to: `/ours`, `/n8n` and `/bullmq`, 200 at once. */
async function startReceiver() {
  const arrivals: Record<StackName, Map<string, Arrival>> = { ours: new Map(), n8n: new Map(), bullmq: new Map() };
  let unreadable = 0;
  let onArrival = () => {};
  const receiver = await startLoopbackReceiver(({ url, headers, body, at }) => {
    const map = (['ours', 'n8n', 'bullmq'] as const).find((name) => url === `/${name}`);
    let seq: unknown;
    try {
      const parsed = JSON.parse(body) as { seq?: unknown; data?: { payload?: { seq?: unknown } } };
      seq = parsed.data?.payload?.seq ?? parsed.seq;
    } catch {
      // counted below
    }
    if (!map || typeof seq !== 'string') return void unreadable++;
    const known = arrivals[map].get(seq);
    const webhookId = String(headers['webhook-id'] ?? '');
    if (known) {
      known.count++;
      known.webhookIds.add(webhookId);
    } else arrivals[map].set(seq, { first: at, count: 1, webhookIds: new Set([webhookId]) });
    onArrival();
  });
  return {
    base: receiver.url,
    arrivals,
    unreadable: () => unreadable,
    /** Resolves when `done()` holds, or `quietMs` after the last arrival. */
    waitFor: async (done: () => boolean, quietMs: number) => {
      let last = performance.now();
      onArrival = () => void (last = performance.now());
      while (!done() && performance.now() - last < quietMs) await sleep(20);
      onArrival = () => {};
    },
    close: receiver.close,
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

// ---------------------------------------------------------------------------------------------- stacks

async function startOurs(receiver: Receiver, cleanups: Cleanups): Promise<Stack> {
  const database = await createBenchDatabase();
  cleanups.push(database.drop);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'peer-ours-'));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const temporal = await startDevServer({ file: path.join(dataDir, 'temporal.db'), retention: DEV_STACK_RETENTION });
  cleanups.push(temporal.stop);
  const processes = await startApiAndWorker(database.url, temporal.address, { HOOK_RATE_LIMIT: '1000000', FIRES_PER_MINUTE: '1000000' });
  cleanups.push(processes.stop);
  const api = new ApiClient(processes.base);
  await api.register('peer@bench.example');
  const incoming = await api.request<{ id: string }>('POST', '/api/webhooks', { name: 'hook', direction: 'incoming' });
  await api.request('POST', '/api/webhooks', { name: 'to receiver', url: `${receiver.base}/ours`, events: ['webhook.received'], secret: SECRET });
  return {
    name: 'ours',
    hookUrl: `${processes.base}/api/hooks/webhooks/${incoming.id}`,
    pids: () => [processes.api().pid, processes.worker().pid, ...(temporal.pid ? [temporal.pid] : []), ...postgresBackendPids(database.name)],
    sqlPids: () => [processes.api().pid, processes.worker().pid],
    databaseUrl: database.url,
    cpuGroups: () => ({
      api: [processes.api().pid],
      worker: [processes.worker().pid],
      temporal: temporal.pid ? [temporal.pid] : [],
      postgres: postgresBackendPids(database.name),
    }),
    kill: (which) => processes.restart(which === 'api' ? 'api' : 'worker'),
    stop: async () => {},
  };
}

const execFileP = promisify(execFile);

/** `npm install n8n@<version>` into .data/peer/n8n when that version is not there yet. */
async function ensureN8n(): Promise<string> {
  const bin = path.join(N8N_DIR, 'node_modules', 'n8n', 'bin', 'n8n');
  const installed = (() => {
    try {
      return (JSON.parse(fs.readFileSync(path.join(N8N_DIR, 'node_modules', 'n8n', 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      return undefined;
    }
  })();
  if (installed === N8N_VERSION) return bin;
  console.log(`installing n8n@${N8N_VERSION} into ${path.relative(process.cwd(), N8N_DIR)} (npm install; takes minutes the first time)`);
  fs.mkdirSync(N8N_DIR, { recursive: true });
  const manifest = path.join(N8N_DIR, 'package.json');
  // Two overrides make the install work from a clean clone with only the npm registry reachable:
  // - n8n-nodes-base depends on xlsx as a tarball from cdn.sheetjs.com, outside the npm registry: take the
  //   registry's last xlsx instead (used by the spreadsheet nodes only);
  // - isolated-vm 6.x (n8n's code sandbox) does not compile against Node 20's headers: 5.0.4 does.
  const scratch = { name: 'n8n-peer-scratch', private: true, overrides: { xlsx: '0.18.5', 'isolated-vm': '5.0.4' } };
  fs.writeFileSync(manifest, JSON.stringify(scratch, null, 2) + '\n');
  await execFileP('npm', ['install', `n8n@${N8N_VERSION}`, '--no-audit', '--no-fund', '--loglevel=warn'], { cwd: N8N_DIR, maxBuffer: 64 << 20 });
  return bin;
}

async function startN8n(receiver: Receiver, cleanups: Cleanups): Promise<Stack> {
  const bin = await ensureN8n();
  const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'peer-n8n-'));
  cleanups.push(() => fs.rmSync(userFolder, { recursive: true, force: true }));
  const port = await findFreePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    N8N_USER_FOLDER: userFolder,
    N8N_PORT: String(port),
    N8N_LISTEN_ADDRESS: '127.0.0.1',
    N8N_HOST: '127.0.0.1',
    WEBHOOK_URL: `http://127.0.0.1:${port}/`,
    N8N_DIAGNOSTICS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
    N8N_TEMPLATES_ENABLED: 'false',
    N8N_PERSONALIZATION_ENABLED: 'false',
    N8N_HIRING_BANNER_ENABLED: 'false',
    N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'true',
    N8N_LOG_LEVEL: 'warn',
    DB_TYPE: 'sqlite',
  };
  delete env.DATABASE_URL;
  const workflowId = 'PeerBench0000001';
  const workflowFile = path.join(userFolder, 'workflow.json');
  fs.writeFileSync(
    workflowFile,
    JSON.stringify({
      id: workflowId,
      name: 'peer bench: hook to receiver',
      active: false,
      nodes: [
        {
          id: 'a0000000-0000-4000-8000-000000000001',
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2,
          position: [0, 0],
          webhookId: 'b0000000-0000-4000-8000-000000000001',
          parameters: { httpMethod: 'POST', path: 'peer-bench', responseMode: 'onReceived', options: {} },
        },
        {
          id: 'a0000000-0000-4000-8000-000000000002',
          name: 'HTTP Request',
          type: 'n8n-nodes-base.httpRequest',
          typeVersion: 4.2,
          position: [220, 0],
          parameters: {
            method: 'POST',
            url: `${receiver.base}/n8n`,
            sendBody: true,
            specifyBody: 'json',
            jsonBody: '={{ JSON.stringify($json.body) }}',
            options: {},
          },
        },
      ],
      connections: { Webhook: { main: [[{ node: 'HTTP Request', type: 'main', index: 0 }]] } },
      settings: { executionOrder: 'v1' },
    }),
  );
  const cli = async (args: string[]) => {
    try {
      const { stdout, stderr } = await execFileP(process.execPath, [bin, ...args], { env, cwd: userFolder, maxBuffer: 16 << 20 });
      return stdout + stderr;
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`n8n ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
  };
  await cli(['import:workflow', `--input=${workflowFile}`]);
  await cli(['update:workflow', `--id=${workflowId}`, '--active=true']);

  let child: ChildProcess | undefined;
  let output = '';
  const hookUrl = `http://127.0.0.1:${port}/webhook/peer-bench`;
  const start = async () => {
    output = '';
    child = spawn(process.execPath, [bin, 'start'], { env, cwd: userFolder, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (c: Buffer) => void (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => void (output += c.toString()));
    const exited = new Promise<never>((_, reject) => child!.once('exit', (code, sig) => reject(new Error(`n8n exited (code ${code}, signal ${sig}):\n${output}`))));
    exited.catch(() => {});
    // The production webhook is registered once the workflow is active: answers 200 (not 404) to a POST.
    await Promise.race([
      waitForHttp(hookUrl, (s) => s === 200, 180_000, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ seq: `probe-${Date.now()}` }) }),
      exited,
    ]);
  };
  const stopChild = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    const force = setTimeout(() => c.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(force);
  };
  cleanups.push(stopChild);
  await start();
  return {
    name: 'n8n',
    hookUrl,
    pids: () => (child?.pid && child.exitCode === null && child.signalCode === null ? processTree(child.pid) : []),
    kill: async () => {
      const c = child!;
      const exited = new Promise((r) => c.once('exit', r));
      for (const pid of processTree(c.pid!).reverse()) process.kill(pid, 'SIGKILL');
      await exited;
      await start();
    },
    stop: stopChild,
  };
}

// ---------------------------------------------------------------------------------------------- phases

interface PhaseResult {
  sent: number;
  accepted: number;
  received: number;
  /** Accepted and not received BENCH_SETTLE_SECONDS after the last arrival (lost unless it comes later). */
  late: number;
  /** The seqs accepted, to count what was lost at the end of the run. */
  acceptedSeqs: string[];
  /** seqs received more than once, and of those, how many came with one webhook-id only. */
  duplicated: number;
  /** Received though the request was not answered 2xx (cut off by a kill after its commit). */
  unanswered: number;
  sameWebhookId: number;
  perSecond: number;
  p50: number;
  p99: number;
  cpuMsPerMessage: number;
  /** SQL statements per message (the stack's sqlPids), and by text over the phase; NaN / none for a stack without. */
  statementsPerMessage: number;
  sql: SqlWindow | undefined;
  /** CPU ms per message by part of the stack (its cpuGroups). */
  cpuByPart: Record<string, number>;
  refused: Record<string, number>;
}

let seqCounter = 0;

/**
 * Sends `count` hooks (one every `intervalMs`, or back to back with IN_FLIGHT concurrent when 0), waits
 * until every accepted one arrived (or SETTLE_MS without an arrival), and measures.
 */
async function phase(stack: Stack, receiver: Receiver, count: number, intervalMs: number, kill?: string): Promise<PhaseResult> {
  const map = receiver.arrivals[stack.name];
  const sentAt = new Map<string, number>();
  const accepted = new Set<string>();
  const refused: Record<string, number> = {};
  const cpu = cpuMeter(stack.pids);
  const parts = Object.keys(stack.cpuGroups?.() ?? {});
  const partMeters = parts.map((part) => cpuMeter(() => stack.cpuGroups!()[part] ?? []));
  const sql = stack.sqlPids && !kill ? await sqlMeter(stack.sqlPids) : undefined;
  const pgStatements = process.env.BENCH_PG_STATEMENTS && stack.databaseUrl && !kill ? await statementsWindow(stack.databaseUrl) : undefined;
  const t0 = performance.now();
  // With BENCH_CPU_PROF: the phase's window on the monotonic clock the profiles use (bench/profile-summary.ts --from/--to).
  const mark = () => process.hrtime.bigint() / 1000n;
  const from = mark();
  const inFlight = new Set<Promise<void>>();
  let killing: Promise<void> | undefined;
  for (let i = 0; i < count; i++) {
    if (intervalMs > 0) {
      const due = t0 + i * intervalMs;
      if (due > performance.now()) await sleep(due - performance.now());
    }
    while (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    if (kill && !killing && accepted.size >= count / 3) {
      // The kill lands among requests in flight; the rest wait until the process serves again (a sender
      // that waits out an outage), so the burst goes on through the restart.
      killing = stack.kill(kill);
      await killing;
    }
    const seq = `${stack.name}-${++seqCounter}`;
    sentAt.set(seq, performance.now());
    const p: Promise<void> = postStatus(stack.hookUrl, { seq })
      .then(
        (status) => {
          if (status >= 200 && status < 300) accepted.add(seq);
          else refused[status] = (refused[status] ?? 0) + 1;
        },
        (err: Error) => void (refused[err.message] = (refused[err.message] ?? 0) + 1),
      )
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  await killing;
  await receiver.waitFor(() => [...accepted].every((s) => map.has(s)), SETTLE_MS);
  const cpuSecondsUsed = cpu();
  if (process.env.BENCH_CPU_PROF) console.log(`    profile window of ${stack.name}'s phase: --from=${from} --to=${mark()}`);
  const cpuByPart = Object.fromEntries(parts.map((part, i) => [part, (1000 * partMeters[i]!()) / Math.max(1, [...sentAt.keys()].filter((q) => map.has(q)).length)]));
  const statements = await sql?.();
  if (pgStatements) {
    const times = await pgStatements();
    const per = (v: number) => (v / Math.max(1, [...sentAt.keys()].filter((q) => map.has(q)).length)).toFixed(3);
    console.log(`    Postgres execution time per message (pg_stat_statements), ${stack.name}: ${per(times.reduce((a, t) => a + t.totalMs, 0))} ms in all; costliest first (calls/msg, ms/msg):`);
    for (const t of times.slice(0, 15)) console.log(`    ${per(t.calls).padStart(7)} ${per(t.totalMs).padStart(7)}  ${t.query.slice(0, 140)}`);
  }
  // Late repeats (a retried attempt after a kill) may come after the last first arrival.
  if (kill) await sleep(Math.min(SETTLE_MS, 10_000));
  const mine = [...sentAt.keys()].map((s) => map.get(s)).filter((a): a is Arrival => !!a);
  const lastArrival = Math.max(...mine.map((a) => a.first));
  const latencies = [...accepted].map((s) => (map.has(s) ? map.get(s)!.first - sentAt.get(s)! : Infinity));
  const dups = mine.filter((a) => a.count > 1);
  return {
    sent: count,
    accepted: accepted.size,
    received: mine.length,
    late: [...accepted].filter((s) => !map.has(s)).length,
    acceptedSeqs: [...accepted],
    duplicated: dups.length,
    unanswered: [...sentAt.keys()].filter((s) => map.has(s) && !accepted.has(s)).length,
    sameWebhookId: dups.filter((a) => a.webhookIds.size === 1 && !a.webhookIds.has('')).length,
    perSecond: mine.length / ((lastArrival - t0) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuMsPerMessage: (1000 * cpuSecondsUsed) / Math.max(1, mine.length),
    statementsPerMessage: statements ? statements.total / Math.max(1, mine.length) : NaN,
    sql: statements,
    cpuByPart,
    refused,
  };
}

// ------------------------------------------------------------------------------------------------ main

async function main() {
  const started = performance.now();
  const loads = [os.loadavg()[0]!];
  const receiver = await startReceiver();
  const cleanups = new Cleanups();
  const stacks: Stack[] = [];
  try {
    if (process.env.BENCH_PG_STATEMENTS) {
      const own = await startStatementsPostgres();
      cleanups.push(own.stop);
      process.env.BENCH_POSTGRES_URL = own.serverUrl;
      console.log('ours on a Postgres of its own with pg_stat_statements (BENCH_PG_STATEMENTS)');
    }
    for (const name of STACKS) {
      const t = performance.now();
      const start = { ours: startOurs, n8n: startN8n, bullmq: (r: Receiver, c: Cleanups) => startBullmq({ url: `${r.base}/bullmq`, secret: SECRET }, c) }[name];
      stacks.push(await start(receiver, cleanups));
      console.log(`${name} started in ${((performance.now() - t) / 1000).toFixed(0)} s`);
    }
    for (const s of stacks) await phase(s, receiver, WARMUP, 0);

    const phases = [{ label: `burst ${BURST}`, count: BURST, interval: 0 }, ...RATES.map((r) => ({ label: `paced ${r}/s`, count: Math.round(r * PACED_SECONDS), interval: 1000 / r }))];
    const results = new Map<string, PhaseResult[]>(); // `${phase}|${stack}`
    for (let round = 0; round < ROUNDS; round++) {
      for (const p of phases) {
        const order = round % 2 === 0 ? stacks : [...stacks].reverse();
        for (const s of order) {
          const r = await phase(s, receiver, p.count, p.interval);
          const key = `${p.label}|${s.name}`;
          results.set(key, [...(results.get(key) ?? []), r]);
          if (Object.keys(r.cpuByPart).length) console.log(`    CPU ms/msg by part: ${Object.entries(r.cpuByPart).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
          if (process.env.BENCH_SQL && r.sql) {
            console.log(`    SQL statements per message, ${p.label}, ours (API + worker), most frequent first:`);
            for (const [text, n] of r.sql.byText.slice(0, 40)) console.log(`    ${(n / Math.max(1, r.received)).toFixed(2).padStart(6)}  ${text.slice(0, 150)}`);
          }
          const refused = Object.entries(r.refused).map(([k, n]) => `${k}: ${n}`).join(', ');
          console.log(
            `  round ${round + 1} ${p.label.padEnd(12)} ${s.name.padEnd(6)} ${r.perSecond.toFixed(1).padStart(7)} msg/s  p50 ${r.p50.toFixed(0).padStart(6)} ms  p99 ${r.p99.toFixed(0).padStart(6)} ms  ` +
              `cpu ${r.cpuMsPerMessage.toFixed(2)} ms/msg${Number.isFinite(r.statementsPerMessage) ? `  SQL ${r.statementsPerMessage.toFixed(1)}/msg` : ''}  accepted ${r.accepted}/${r.sent} late ${r.late} dup ${r.duplicated}${refused ? `  refused {${refused}}` : ''}  load ${os.loadavg()[0]!.toFixed(1)}`,
          );
          loads.push(os.loadavg()[0]!);
        }
      }
    }

    const killResults: Array<[string, Stack, PhaseResult]> = [];
    for (const which of KILLS) {
      const owner: StackName = which === 'n8n' ? 'n8n' : which === 'bullmq' || which === 'redis' ? 'bullmq' : 'ours';
      const s = stacks.find((x) => x.name === owner);
      if (!s) continue;
      const r = await phase(s, receiver, KILL_BURST, 0, which);
      killResults.push([which, s, r]);
      console.log(`  SIGKILL ${which} mid-burst: accepted ${r.accepted}/${r.sent}, received ${r.received}, late ${r.late}, duplicated ${r.duplicated}`);
    }

    // Lost: accepted in any phase and still not received once every stack had its chance to catch up.
    const allAccepted = (name: string) => [
      ...[...results.entries()].filter(([k]) => k.endsWith(`|${name}`)).flatMap(([, rs]) => rs.flatMap((r) => r.acceptedSeqs)),
      ...killResults.filter(([, s]) => s.name === name).flatMap(([, , r]) => r.acceptedSeqs),
    ];
    for (const s of stacks) {
      const seqs = allAccepted(s.name);
      await receiver.waitFor(() => seqs.every((q) => receiver.arrivals[s.name].has(q)), FINAL_SETTLE_MS);
    }
    const lostOf = (name: StackName, seqs: string[]) => seqs.filter((q) => !receiver.arrivals[name].has(q)).length;
    const kills = killResults.map(([which, s, r]) => {
      const refused = Object.entries(r.refused).map(([k, n]) => `${k}: ${n}`).join(', ') || 'none';
      return (
        `  SIGKILL ${({ ours: `our ${which}`, n8n: 'n8n', bullmq: which === 'redis' ? 'Redis' : 'BullMQ app' } as const)[s.name].padEnd(11)} mid-burst of ${KILL_BURST}: accepted ${r.accepted}, ` +
        `LOST ${lostOf(s.name, r.acceptedSeqs)}, duplicated ${r.duplicated}${s.name !== 'n8n' ? ` (${r.sameWebhookId} with one webhook-id)` : ''}, ` +
        `received though unanswered ${r.unanswered}; refused while it was down: ${refused}`
      );
    });
    const totals = stacks.map((s) => {
      const arrivals = [...receiver.arrivals[s.name].values()];
      const dups = arrivals.filter((a) => a.count > 1);
      return (
        `  ${s.name.padEnd(6)} whole run: ${allAccepted(s.name).length} accepted, LOST ${lostOf(s.name, allAccepted(s.name))}, ` +
        `duplicated ${dups.length}${s.name !== 'n8n' ? ` (${dups.filter((a) => a.webhookIds.size === 1 && !a.webhookIds.has('')).length} with one webhook-id)` : ''}`
      );
    });

    const f = (v: number, digits = 0) => (Number.isFinite(v) ? v.toFixed(digits) : 'never');
    // Ours beside each peer run, and ours' ratio to each (≥ 1: ours ahead).
    const peers = stacks.filter((s) => s.name !== 'ours').map((s) => s.name);
    const names = stacks.map((s) => s.name);
    const described = { ours: "ours (npm start's processes)", n8n: `n8n ${N8N_VERSION}`, bullmq: 'Fastify + BullMQ + Redis (AOF everysec)' };
    const lines = [
      '',
      `peer: public hook → loopback receiver, ${names.map((n) => described[n]).join(' beside ')}; medians of ${ROUNDS} round(s)`,
      `  ${'phase'.padEnd(14)} ${'figure'.padEnd(15)} ${names.map((n) => n.padStart(9)).join(' ')} ${names.includes('ours') ? peers.map((n) => `ours/${n}`.padStart(12)).join(' ') : ''}  (ratio ≥ 1 = ours ahead)`,
    ];
    const get = (label: string, name: string, pick: (r: PhaseResult) => number) => median((results.get(`${label}|${name}`) ?? []).map(pick));
    for (const p of phases) {
      const figures: Array<[string, (r: PhaseResult) => number, number, boolean]> = [
        ['msg/s', (r) => r.perSecond, 1, true],
        ['p50 ms', (r) => r.p50, 0, false],
        ['p99 ms', (r) => r.p99, 0, false],
        ['CPU ms/msg', (r) => r.cpuMsPerMessage, 2, false],
        ['SQL/msg', (r) => r.statementsPerMessage, 1, false],
        ['late', (r) => r.late, 0, false],
        ['duplicated', (r) => r.duplicated, 0, false],
      ];
      for (const [name, pick, digits, higherIsBetter] of figures) {
        if (p.interval === 0 && name.startsWith('p')) continue;
        if (p.interval > 0 && name === 'msg/s') continue;
        const values = names.map((n) => get(p.label, n, pick));
        const ours = get(p.label, 'ours', pick);
        const ratios = names.includes('ours') && !['late', 'duplicated', 'SQL/msg'].includes(name)
          ? peers.map((n) => f(higherIsBetter ? ours / get(p.label, n, pick) : get(p.label, n, pick) / ours, 2).padStart(12)).join(' ')
          : '';
        const shown = (v: number) => (name === 'SQL/msg' && !Number.isFinite(v) ? '–' : f(v, digits));
        lines.push(`  ${p.label.padEnd(14)} ${name.padEnd(15)} ${values.map((v) => shown(v).padStart(9)).join(' ')} ${ratios}`);
      }
    }
    lines.push(...kills, ...totals);
    lines.push(
      `  CPU: ours = API + worker + Temporal dev server + Postgres backends of its database; n8n = its process tree; bullmq = its server + redis-server.`,
      `  settings: BENCH_BURST=${BURST} BENCH_IN_FLIGHT=${IN_FLIGHT} BENCH_RATES=${RATES.join(',')} BENCH_PACED_SECONDS=${PACED_SECONDS} BENCH_ROUNDS=${ROUNDS} BENCH_KILL=${KILLS.join(',')} BENCH_KILL_BURST=${KILL_BURST}`,
      `  ${os.cpus().length} cores, load average ${f(Math.min(...loads), 1)}–${f(Math.max(...loads), 1)} (median ${f(median(loads), 1)}); ${((performance.now() - started) / 1000).toFixed(0)} s in all; unreadable bodies ${receiver.unreadable()}`,
    );
    console.log(lines.join('\n'));
  } finally {
    for (const s of stacks) await s.stop().catch(() => {});
    await cleanups.run();
    await receiver.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
