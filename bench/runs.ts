/**
 * `npm run bench:runs`: a model run on the real engine against a scripted OpenAI-compatible provider on
 * loopback (0 ms model latency) — model call, tool call, model call — beside a bare Temporal workflow
 * making the same three calls as three activities (bench/raw-run-workflow.ts, same client code: the
 * `openai` client and the engine's tool request), on one Temporal dev server (started here, in memory)
 * and a fresh database `bench_<pid>`.
 *
 * Ours per run: the run row and its outbox hand-off, one activity per step (each recording its row; the
 * model steps also the steps they add), the first of which also begins the run (beginRunStep: slot,
 * plan), and the last ends it (output, agent.completed and its dispatch). Reports, for each side: runs/s for a burst of BENCH_RUNS runs started at once, and
 * p50/p99 latency from start to the workflow's result for runs paced at BENCH_RATE/s for 10 s; and our
 * figure over the baseline's.
 *
 * Settings: BENCH_RUNS (200), BENCH_RATE (10), BENCH_ROUNDS (1: rounds alternate ours and the baseline,
 * the medians are printed). Each burst also reports its CPU time per run: this process's (both workers,
 * the client), its servers' (the Temporal dev server it started and its database's Postgres backends;
 * other load not counted; Linux), the two together, and the whole machine's (other load included), and
 * for ours the SQL statements per run (BENCH_SQL=1: each statement's count, most frequent first), and
 * with BENCH_TEMPORAL_OPS=1 the Temporal dev server's requests per run, by operation, from its `/metrics`
 * (the RPCs it answered, counted by each service that handled them, and its persistence and visibility
 * store requests; the cluster-metadata and namespace reads are periodic, so they grow with the burst's length).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { DefaultLogger, Runtime, type WorkerOptions } from '@temporalio/worker';
import { toolRequest } from '../engine/runs/executor/http';
import { createModelClient } from '../engine/runs/executor/model-client';
import { withTransaction, type Db } from '../db/pool';
import { createAgentsRepository } from '../db/repositories/agents';
import { createRunsRepository } from '../db/repositories/runs';
import { createToolsRepository } from '../db/repositories/tools';
import { runLineLimits } from '../engine/runs/run-line';
import { startRun } from '../engine/outbox/starts';
import { workflowIds } from '../engine/temporal/names';
import { machineBusySeconds, postgresBackendPids, processCpuSeconds } from './kit/cpu';
import { startModelServer, textReply, toolCallsReply, type ChatRequest } from './kit/model-server';
import { ApiClient, waitForHttp } from './kit/api-client';
import { hasContentChunk, hasDelta, readSse, startBareProxy } from './kit/first-token';
import { startReceiver } from './kit/receiver';
import { jsonSetting, listSetting, rateSetting, setting } from './kit/settings';
import { benchEnv, Cleanups, createBenchDatabase, startBareWorker, startDevServer, startEntry, startInProcessEngine } from './kit/stack';
import { findFreePort } from '../scripts/processes';
import { median, percentile } from './kit/stats';

const RUNS = Math.max(1, setting('BENCH_RUNS', 200));
const RATE = rateSetting('BENCH_RATE', 10);
const SERIAL = setting('BENCH_SERIAL', 25);
/** Worker options over ours, for tuning runs (JSON; applied to our main worker and to the bare one alike). */
const WORKER_TUNING = jsonSetting<WorkerOptions>('BENCH_WORKER');
const PHASES = new Set(listSetting('BENCH_PHASES', 'serial,burst,paced,ttft'));
/** The provider streams its answers (the engine's calls then stream, as with a real provider); 0: it refuses `stream: true`, as before streaming. */
const MODEL_STREAMING = setting('BENCH_MODEL_STREAMING', 1) !== 0;
/** Time to first token: runs streaming at once, waves of them, and the shape of each streamed answer. */
const TTFT_RUNS = Math.max(1, setting('BENCH_TTFT_RUNS', 20));
const TTFT_WAVES = Math.max(1, setting('BENCH_TTFT_WAVES', 3));
const STREAM_CHUNKS = Math.max(1, setting('BENCH_STREAM_CHUNKS', 20));
const STREAM_GAP_MS = setting('BENCH_STREAM_GAP_MS', 10);
/**
 * Our run's provider answers once the run's client has its live stream open, and this many ms more (the
 * API's subscription settled): no client misses its first delta. Not counted: TTFT starts at the first byte.
 */
const STREAM_HOLD_MS = setting('BENCH_STREAM_HOLD_MS', 50);
/** Resolved when the client of the run tagged so has its stream open (bench/kit/first-token.ts). */
const listening = new Map<string, { opened: Promise<void>; open: () => void }>();
function listenerOf(tag: string) {
  let entry = listening.get(tag);
  if (!entry) {
    let open = () => {};
    const opened = new Promise<void>((resolve) => (open = resolve));
    entry = { opened, open };
    listening.set(tag, entry);
  }
  return entry;
}
const STREAM_MODEL = 'bench-stream';
const ROUNDS = Math.max(1, setting('BENCH_ROUNDS', 1));
const MODEL = 'bench-model';
const RAW_QUEUE = 'bench-raw-runs';

interface Figures {
  runsPerSecond: number;
  p50: number;
  p99: number;
}

type Start = () => Promise<() => Promise<unknown>>;

/** One run at a time, ours and the bare one in turn: the median latency of each, unloaded. */
async function measureSerial(ours: Start, bare: Start): Promise<{ ours: number; bare: number }> {
  const o: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < SERIAL; i++) {
    for (const [start, into] of [[ours, o], [bare, b]] as const) {
      const t0 = performance.now();
      await (await start())();
      into.push(performance.now() - t0);
    }
  }
  return { ours: median(o), bare: median(b) };
}

/** Throughput of a burst of `count` starts, then latency of starts paced at RATE/s for 10 s. */
async function measure(start: Start, label: string): Promise<Figures> {
  let runsPerSecond = NaN;
  if (PHASES.has('burst')) runsPerSecond = await measureBurst(start, label);
  if (!PHASES.has('paced')) return { runsPerSecond, p50: NaN, p99: NaN };
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  for (let i = 0; i < RATE * 10; i++) {
    const t0 = performance.now();
    pending.push(
      start()
        .then((wait) => wait())
        .then(() => void latencies.push(performance.now() - t0)),
    );
    await sleep(1000 / RATE);
  }
  await Promise.all(pending);
  return { runsPerSecond, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/**
 * CPU seconds used so far by what serves this bench alone: the Temporal dev server it started and the
 * Postgres backends of its database, by pid; other load on the machine is not counted.
 */
function serverCpu(): { temporal: Map<number, number>; postgres: Map<number, number> } {
  const cpu = (pids: number[]) => new Map(pids.map((pid) => [pid, processCpuSeconds(pid)]));
  return { temporal: cpu(servers.temporalPid ? [servers.temporalPid] : []), postgres: cpu(postgresBackendPids(servers.database)) };
}
/** What serves this bench: its dev server's pid and its database's name (set in main). */
const servers = { temporalPid: undefined as number | undefined, database: '' };
/** CPU ms per run between two serverCpu readings (pids new in the second counted from 0). */
const spentMs = (before: Map<number, number>, after: Map<number, number>) => ([...after].reduce((sum, [pid, s]) => sum + s - (before.get(pid) ?? 0), 0) * 1000) / RUNS;
/** How often a waiter of ours found its workflow not started yet (each a `result()` call answered not found). */
let notYetStarted = 0;

/** SQL statements sent by this process (every pg client), by text; counted while `sql.on`. */
const sql = { on: false, counts: new Map<string, number>() };
const clientQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (sql.on) {
    const first = args[0] as string | { text?: string };
    const text = (typeof first === 'string' ? first : (first?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 90);
    sql.counts.set(text, (sql.counts.get(text) ?? 0) + 1);
  }
  return clientQuery.apply(this, args);
} as typeof pg.Client.prototype.query;

/**
 * The Temporal dev server's persistence requests so far, by operation (its Prometheus `/metrics`), when
 * BENCH_TEMPORAL_OPS is set: what the server stores per run, ours beside the bare one's.
 */
let metricsUrl: string | undefined;
async function persistenceOps(): Promise<Map<string, number>> {
  const ops = new Map<string, number>();
  if (!metricsUrl) return ops;
  const text = await (await fetch(metricsUrl)).text();
  for (const line of text.split('\n')) {
    const m = /^(persistence_requests|visibility_persistence_requests|service_requests)\{.*operation="([^"]+)".*\} (\S+)$/.exec(line);
    const key = m && `${m[1]!.replace('_requests', '').replace('_persistence', '')}:${m[2]}`;
    if (key) ops.set(key, (ops.get(key) ?? 0) + Number(m[3]));
  }
  return ops;
}
const opsPerRun: Record<string, Map<string, number>> = {};

const burstCosts: { label: string; processMs: number; temporalMs: number; postgresMs: number; machineMs: number; statements: number }[] = [];

async function measureBurst(start: Start, label: string): Promise<number> {
  const cpu0 = process.cpuUsage();
  const busy0 = machineBusySeconds();
  const servers0 = process.platform === 'linux' ? serverCpu() : undefined;
  sql.counts.clear();
  sql.on = true;
  const notYet0 = notYetStarted;
  const ops0 = await persistenceOps();
  if (process.env.BENCH_MARKS) console.log(`mark ${label} start ${process.hrtime.bigint() / 1000n}`);
  const burstStart = performance.now();
  const waits: Promise<unknown>[] = [];
  for (let i = 0; i < RUNS; i += 25) {
    const started = await Promise.all(Array.from({ length: Math.min(25, RUNS - i) }, start));
    waits.push(...started.map((wait) => wait()));
  }
  await Promise.all(waits);
  const elapsed = performance.now() - burstStart;
  if (label === 'ours' && process.env.BENCH_SQL) console.log(`ours: ${((notYetStarted - notYet0) / RUNS).toFixed(2)} waits per run found the workflow not started yet`);
  if (process.env.BENCH_MARKS) console.log(`mark ${label} end ${process.hrtime.bigint() / 1000n}`);
  sql.on = false;
  const cpu = process.cpuUsage(cpu0);
  let temporalMs = NaN;
  let postgresMs = NaN;
  if (servers0) {
    const servers1 = serverCpu();
    temporalMs = spentMs(servers0.temporal, servers1.temporal);
    postgresMs = spentMs(servers0.postgres, servers1.postgres);
  }
  const ops1 = await persistenceOps();
  opsPerRun[label] = new Map([...ops1].map(([op, n]) => [op, (n - (ops0.get(op) ?? 0)) / RUNS]));
  const statements = [...sql.counts.values()].reduce((a, b) => a + b, 0);
  burstCosts.push({ label, processMs: (cpu.user + cpu.system) / 1000 / RUNS, temporalMs, postgresMs, machineMs: ((machineBusySeconds() - busy0) * 1000) / RUNS, statements: statements / RUNS });
  return RUNS / (elapsed / 1000);
}

async function createBenchAgent(db: Db, toolUrl: string): Promise<{ accountId: string; agentId: string }> {
  const { rows } = await db.query<{ id: string }>(
    `WITH u AS (INSERT INTO users (email, password_hash, name) VALUES ($1, 'x', 'bench') RETURNING id)
     INSERT INTO accounts (owner_user_id, name, balance) SELECT id, 'bench', 0 FROM u RETURNING id`,
    [`bench-${randomUUID()}@example.com`],
  );
  const accountId = rows[0]!.id;
  const agent = await createAgentsRepository(db).insert(accountId, {
    name: 'bench', description: '', goal: 'Answer with the probe', persona: '', voice: '', systemPrompt: 'You are a benchmark.',
    policies: [], memoryConfig: { type: 'conversation', maxMessages: 50, ttlMinutes: 1440 }, configJson: { model: MODEL },
    status: 'active', graph: { nodes: [], edges: [] },
  });
  await createToolsRepository(db).insert(accountId, agent.id, {
    type: 'custom', name: 'probe', description: 'Probes', configJson: { endpoint: `${toolUrl}/probe`, method: 'POST', headers: {}, bodyTemplate: '{{input}}' }, enabled: true,
  });
  return { accountId, agentId: agent.id };
}

/** The tag of a TTFT request (`ttft-<wave>-<i>` ours, `bare-<wave>-<i>` the proxy's, in its user message), or none. */
function ttftTag(request: ChatRequest): string | undefined {
  return /(ttft|bare)-\d+-\d+/.exec(JSON.stringify(request.messages))?.[0];
}

/** The real API process (api/server.ts) on this database and dev server: what serves the runs' live streams. */
async function startApi(databaseUrl: string, temporalAddress: string): Promise<{ base: string; stop: () => Promise<void> }> {
  const port = await findFreePort();
  const base = `http://127.0.0.1:${port}`;
  const api = startEntry('api/server.ts', {
    ...benchEnv(databaseUrl, temporalAddress, port),
    LOG_LEVEL: 'warn',
    AUTH_RATE_LIMIT_MAX: '100000',
    INITIAL_BALANCE: '1000000000',
    RUN_CONCURRENCY_PER_ACCOUNT: '1000',
    RUN_STREAMS_PER_USER: '1000',
    RUN_STREAMS_PER_ACCOUNT: '1000',
  });
  await waitForHttp(`${base}/api/health`, (status) => status === 200, 120_000);
  return { base, stop: () => api.stop() };
}

/**
 * Time to first token, provider's first byte → client's first text, with TTFT_RUNS streams at once
 * (TTFT_WAVES waves): our runs through the API's live stream, beside a bare proxy of the same provider's
 * stream to the same kind of client. Prints p50/p99 of each, their ratio and difference (target: ours p99
 * ≤ 1.5× the proxy's and ≤ 50 ms over it).
 */
async function measureFirstTokens(base: string, providerBaseUrl: string, firstBytes: Map<string, number>, cleanups: Cleanups): Promise<void> {
  if (!MODEL_STREAMING) {
    console.log('time to first token: skipped (BENCH_MODEL_STREAMING=0: the provider does not stream)');
    return;
  }
  const client = new ApiClient(base);
  const token = await client.register(`ttft-${process.pid}@bench.test`);
  const agent = await client.request<{ id: string }>('POST', '/api/agents', { name: 'streamer', configJson: { model: STREAM_MODEL } });
  const proxy = await startBareProxy(providerBaseUrl);
  cleanups.push(proxy.close);
  const ours: number[] = [];
  const bare: number[] = [];
  const sample = (into: number[], tag: string, times: { firstTextAt: number | null }) => {
    const first = firstBytes.get(tag);
    if (first === undefined || times.firstTextAt === null) throw new Error(`time to first token: ${tag} saw no ${first === undefined ? 'provider answer' : 'text'}`);
    into.push(times.firstTextAt - first);
  };
  // A warm-up wave of each (connections, the API's listener), not counted.
  for (let wave = 0; wave <= TTFT_WAVES; wave++) {
    const o: number[] = wave === 0 ? [] : ours;
    const b: number[] = wave === 0 ? [] : bare;
    await Promise.all(
      Array.from({ length: TTFT_RUNS }, async (_, i) => {
        const tag = `ttft-${wave}-${i}`;
        const run = await client.request<{ id: string }>('POST', `/api/agents/${agent.id}/runs`, { input: tag });
        const times = await readSse(`${base}/api/runs/${run.id}/events`, { method: 'GET', headers: { authorization: `Bearer ${token}` } }, hasDelta, () => listenerOf(tag).open());
        sample(o, tag, times);
      }),
    );
    await Promise.all(
      Array.from({ length: TTFT_RUNS }, async (_, i) => {
        const tag = `bare-${wave}-${i}`;
        const body = JSON.stringify({ model: STREAM_MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: tag }] });
        const times = await readSse(proxy.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }, hasContentChunk);
        sample(b, tag, times);
      }),
    );
  }
  const row = (label: string, f: (xs: number[]) => number) => `${label.padEnd(28)} ${f(ours).toFixed(1).padStart(10)} ${f(bare).toFixed(1).padStart(10)}`;
  console.log(`time to first token (provider's first byte → SSE client's first text, ms): ${TTFT_RUNS} streams at once, ${TTFT_WAVES} wave(s), ${STREAM_CHUNKS} chunks ${STREAM_GAP_MS} ms apart`);
  console.log(`${''.padEnd(28)} ${'ours'.padStart(10)} ${'bare proxy'.padStart(10)}`);
  console.log(row('p50', (xs) => percentile(xs, 50)));
  console.log(row('p99', (xs) => percentile(xs, 99)));
  const p99 = { ours: percentile(ours, 99), bare: percentile(bare, 99) };
  console.log(`ratio (ours / bare p99): ${(p99.ours / p99.bare).toFixed(2)} (target ≤ 1.5); difference: ${(p99.ours - p99.bare).toFixed(1)} ms (target ≤ 50)`);
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const cleanups = new Cleanups();
  // Deterministic for concurrent runs: ask for the tool until its result is in the conversation.
  // The TTFT runs' model (STREAM_MODEL) answers in text, in STREAM_CHUNKS pieces; each answer's first byte is noted by its run's tag.
  const firstBytes = new Map<string, number>();
  const models = await startModelServer(
    (request) =>
      request.model === STREAM_MODEL
        ? textReply('streamed '.repeat(STREAM_CHUNKS * 2).trim())
        : request.messages.at(-1)?.role === 'tool'
          ? textReply('done')
          : toolCallsReply([{ name: 'probe', arguments: { q: 1 } }]),
    {
      streaming: MODEL_STREAMING,
      shape: (request) => {
        if (request.model !== STREAM_MODEL) return { chunks: 1, gapMs: 0 };
        const tag = ttftTag(request);
        // Ours waits for its client's stream (the bare proxy's client is listening by construction: it made the request).
        const hold = tag?.startsWith('ttft-')
          ? async () => {
              await listenerOf(tag).opened;
              await sleep(STREAM_HOLD_MS);
            }
          : undefined;
        return { chunks: STREAM_CHUNKS, gapMs: STREAM_GAP_MS, hold };
      },
      onFirstByte: (request, at) => {
        const tag = ttftTag(request);
        if (tag) firstBytes.set(tag, at);
      },
    },
  );
  cleanups.push(models.close);
  const tools = await startReceiver(() => ({ body: { probed: true } }));
  cleanups.push(tools.close);
  const database = await createBenchDatabase();
  cleanups.push(() => (process.env.BENCH_KEEP_DB ? console.log(`kept database ${database.url}`) : database.drop()));
  const temporal = await startDevServer();
  cleanups.push(temporal.stop);
  Object.assign(servers, { temporalPid: temporal.pid, database: database.name });
  if (process.env.BENCH_TEMPORAL_OPS) metricsUrl = temporal.metricsUrl;
  const stack = await startInProcessEngine(
    database.url,
    temporal.address,
    { RECONCILE_INTERVAL_MS: '1000', RUN_CONCURRENCY_PER_ACCOUNT: '1000', MODEL_BASE_URL: models.baseUrl, MODEL_API_KEY: 'sk-bench', LOG_LEVEL: 'silent' },
    { main: WORKER_TUNING },
  );
  cleanups.push(stack.stop);
  const { db, config, engine, client } = stack;
  const modelClient = createModelClient(config.model)!;
  const rawWorker = await startBareWorker({
    connection: stack.connection,
    taskQueue: RAW_QUEUE,
    workflowsPath: require.resolve('./raw-run-workflow'),
    tuning: WORKER_TUNING,
    activities: {
      async rawModelCall(withToolResult: boolean) {
        const messages = withToolResult
          ? [
              { role: 'user' as const, content: 'go' },
              { role: 'assistant' as const, content: null, tool_calls: [{ id: 'c', type: 'function' as const, function: { name: 'probe', arguments: '{"q":1}' } }] },
              { role: 'tool' as const, tool_call_id: 'c', content: '{"probed":true}' },
            ]
          : [{ role: 'user' as const, content: 'go' }];
        const answer = await modelClient.complete({ model: MODEL, messages, tools: [{ type: 'function', function: { name: 'probe', parameters: { type: 'object' } } }] });
        return answer.choices[0]!.finish_reason;
      },
      async rawToolCall() {
        return JSON.stringify(await toolRequest({ url: `${tools.url}/probe`, method: 'POST', body: '{"q":1}', headers: { 'content-type': 'application/json' }, timeoutMs: 15_000, allowPrivate: true, dnsServers: null }));
      },
    },
  });
  cleanups.push(rawWorker.stop);

  try {
    const { accountId, agentId } = await createBenchAgent(db, tools.url);
    const ours = async () => {
      const run = await withTransaction(db, async (tx) => {
        const r = await createRunsRepository(tx).insertRun({ accountId, agentId, input: 'probe it' });
        await startRun(tx, r, runLineLimits(config));
        return r;
      });
      engine.handOff.kick();
      return async () => {
        // The hand-off (in this process) starts the workflow after the commit: wait for it here rather than
        // ask the server for a workflow it does not have yet (a 200-run burst's waiters asked ~5 times a run).
        await engine.handOff.idle();
        // The hand-off may not have started the workflow yet (it failed and is retried, or the run is parked until a slot frees): wait for it to exist.
        // Asked again after 5 ms, then less and less often (up to every 100 ms): a burst's waiters must not
        // load the server they measure with their own polling.
        for (let pause = 5; ; pause = Math.min(100, pause * 2)) {
          try {
            const outcome = (await client.workflow.getHandle(workflowIds.run(run.id)).result()) as { status: string };
            if (outcome.status !== 'succeeded') throw new Error(`run ${run.id} ${outcome.status}`);
            return;
          } catch (err) {
            if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
            notYetStarted++;
            await sleep(pause);
          }
        }
      };
    };
    const bare = async () => {
      const handle = await client.workflow.start('rawModelRunWorkflow', { taskQueue: RAW_QUEUE, workflowId: `raw-run-${randomUUID()}` });
      return () => handle.result();
    };

    // Warm-up (bundles loaded, connections open).
    for (const start of [ours, bare]) await Promise.all((await Promise.all(Array.from({ length: 10 }, start))).map((wait) => wait()));
    const results: { ours: Figures & { serial: number }; bare: Figures & { serial: number } }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const serial = PHASES.has('serial') ? await measureSerial(ours, bare) : { ours: NaN, bare: NaN };
      const o = await measure(ours, 'ours');
      const sqlOfOurs = [...sql.counts.entries()].sort((x, y) => y[1] - x[1]);
      const b = await measure(bare, 'bare');
      if (process.env.BENCH_SQL && PHASES.has('burst')) {
        console.log(`SQL statements per run (ours, burst):`);
        for (const [text, n] of sqlOfOurs) console.log(`${(n / RUNS).toFixed(2).padStart(7)}  ${text}`);
      }
      results.push({ ours: { ...o, serial: serial.ours }, bare: { ...b, serial: serial.bare } });
      if (ROUNDS > 1) {
        console.log(`round ${round + 1}: serial ${serial.ours.toFixed(0)} vs ${serial.bare.toFixed(0)} ms; burst ${o.runsPerSecond.toFixed(1)} vs ${b.runsPerSecond.toFixed(1)} runs/s`);
      }
    }
    const pick = (side: 'ours' | 'bare', k: keyof Figures | 'serial') => median(results.map((r) => r[side][k]));
    const row = (label: string, f: (side: 'ours' | 'bare') => string) => `${label.padEnd(28)} ${f('ours').padStart(10)} ${f('bare').padStart(10)}`;
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE status = 'succeeded'`);
    const calls = models.calls();
    console.log(`model runs: model → tool → model, ${RUNS} per burst, ${RATE}/s paced for 10 s, ${ROUNDS} round(s) (medians)`);
    console.log(row('', (s) => (s === 'ours' ? 'ours' : 'bare')));
    console.log(row('latency (ms, one at a time)', (s) => pick(s, 'serial').toFixed(0)));
    console.log(row('runs/s (burst)', (s) => pick(s, 'runsPerSecond').toFixed(1)));
    console.log(row('p50 latency (ms, paced)', (s) => pick(s, 'p50').toFixed(0)));
    console.log(row('p99 latency (ms, paced)', (s) => pick(s, 'p99').toFixed(0)));
    console.log(`ratio (ours / bare runs/s): ${(pick('ours', 'runsPerSecond') / pick('bare', 'runsPerSecond')).toFixed(2)} (target ≥ 0.7)`);
    console.log(`ratio (bare / ours latency, one at a time): ${(pick('bare', 'serial') / pick('ours', 'serial')).toFixed(2)}`);
    if (PHASES.has('burst')) {
      const cost = (side: 'ours' | 'bare', k: 'processMs' | 'temporalMs' | 'postgresMs' | 'machineMs' | 'statements') => median(burstCosts.filter((c) => c.label === side).map((c) => c[k]));
      console.log(row('CPU ms per run (process)', (s) => cost(s, 'processMs').toFixed(1)));
      console.log(row('CPU ms per run (Temporal)', (s) => cost(s, 'temporalMs').toFixed(1)));
      console.log(row('CPU ms per run (Postgres)', (s) => cost(s, 'postgresMs').toFixed(1)));
      console.log(row('CPU ms per run (all three)', (s) => (cost(s, 'processMs') + cost(s, 'temporalMs') + cost(s, 'postgresMs')).toFixed(1)));
      console.log(row('CPU ms per run (machine)', (s) => cost(s, 'machineMs').toFixed(1)));
      console.log(row('SQL statements per run', (s) => cost(s, 'statements').toFixed(1)));
      if (metricsUrl) {
        const names = [...new Set([...(opsPerRun.ours?.keys() ?? []), ...(opsPerRun.bare?.keys() ?? [])])];
        const per = (side: 'ours' | 'bare', op: string) => opsPerRun[side]?.get(op) ?? 0;
        console.log('Temporal requests per run (service: the RPCs it answered; persistence, visibility: its store):');
        for (const op of names.sort((a, b) => per('ours', b) - per('ours', a))) {
          if (per('ours', op) >= 0.05 || per('bare', op) >= 0.05) console.log(row(`  ${op}`, (s) => per(s, op).toFixed(2)));
        }
      }
    }
    console.log(`(${rows[0]!.n} runs succeeded; ${calls} model calls in all, both sides; the provider ${MODEL_STREAMING ? 'streams' : 'does not stream'})`);
    if (PHASES.has('ttft')) {
      const api = await startApi(database.url, temporal.address);
      cleanups.push(api.stop);
      await measureFirstTokens(api.base, models.baseUrl, firstBytes, cleanups);
    }
  } finally {
    await cleanups.run();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
