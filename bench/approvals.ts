/**
 * `npm run bench:approvals`: BENCH_APPROVALS_RUNS (1000) model runs that all wait for a person's decision at
 * once (their model asks for a tool with `requiresApproval`), on the real API and worker processes
 * (bench/kit/stack.ts `startApiAndWorker`), a Temporal dev server started here (in memory) and a fresh database
 * `bench_<pid>`; the model is a scripted provider on loopback (0 ms), the tool a receiver on loopback.
 *
 * Prints the worker's and the API's resident memory (VmRSS) before the runs (after 20 runs made, approved and
 * finished, so every code path is loaded) and once they all wait (a
 * waiting run is a timer and a signal handler in Temporal's history: it may cost the worker no more than its
 * workflow cache holds), then sends the N decisions (approve) at once and measures, for each, decision
 * sent → tool call received (p50/p99); beside the same for N bare workflows waiting on a signal
 * (bench/approval-wait-workflow.ts: signal sent → its one activity's call received, as many at a time), on the same dev
 * server in the same run, and our p99 over the bare one (target ≤ 1.5).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createPool } from '../db/pool';
import { ApiClient } from './kit/api-client';
import { startModelServer, textReply, toolCallsReply } from './kit/model-server';
import { startReceiver } from './kit/receiver';
import { setting } from './kit/settings';
import { Cleanups, createBenchDatabase, startApiAndWorker, startBareWorker, startDevServer } from './kit/stack';
import { ms, percentile, ratio } from './kit/stats';

const RUNS = Math.max(1, setting('BENCH_APPROVALS_RUNS', 1000));
/** How many run starts (and bare workflow starts) are in flight at once while the waiting runs are made. */
const START_CONCURRENCY = 50;
const BARE_QUEUE = 'bench-bare-approvals';
/** How many decisions (and bare signals) are in flight at once in the burst. */
const IN_FLIGHT = Math.max(1, setting('BENCH_APPROVALS_IN_FLIGHT', 100));
/** Runs made (waited, approved, finished) before the first memory reading. */
const WARM_UP = 20;

const say = (line: string) => console.log(line);

/** A process's resident memory in MiB (Linux /proc). */
function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return line ? Number(line.split(/\s+/)[1]) / 1024 : NaN;
}

/** Runs `fn` for 0…n-1, `limit` at a time. */
async function inBatches(n: number, limit: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, n) }, async () => {
    while (next < n) await fn(next++);
  }));
}

/** Polls `check` every 250 ms until true, or throws after timeoutMs naming `what`. */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const cleanups = new Cleanups();
  try {
    const database = await createBenchDatabase();
    cleanups.push(() => database.drop());
    const temporal = await startDevServer();
    cleanups.push(() => temporal.stop());

    // The tool's receiver: when each call arrived, by the run's number (ours) or the workflow's (bare).
    const arrived = { ours: new Map<number, number>(), bare: new Map<number, number>() };
    const tool = await startReceiver((req) => {
      const side = req.url.startsWith('/bare/') ? arrived.bare : arrived.ours;
      const i = req.url.startsWith('/bare/') ? Number(req.url.slice('/bare/'.length)) : (JSON.parse(req.body) as { i: number }).i;
      if (i < RUNS && !side.has(i)) side.set(i, req.at);
      return { body: { paid: true } };
    });
    cleanups.push(() => tool.close());
    // The model asks for `pay` with the run's number (its input), then answers once it read the tool's result.
    // Unstreamed, as when its figures were measured (docs/benchmarks.md): bench:runs measures streaming.
    const models = await startModelServer((request) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return textReply('paid');
      return toolCallsReply([{ name: 'pay', arguments: { i: Number(String(last.content).replace(/\D/g, '')) } }]);
    }, { streaming: false });
    cleanups.push(() => models.close());

    const stack = await startApiAndWorker(database.url, temporal.address, {
      MODEL_BASE_URL: models.baseUrl,
      MODEL_API_KEY: 'sk-bench',
      INITIAL_BALANCE: String(1_000 * RUNS + 1_000_000),
      AUTH_RATE_LIMIT_MAX: '100000',
      RUN_CONCURRENCY_PER_ACCOUNT: String(Math.max(100, RUNS)),
      APPROVAL_TIMEOUT: '24h',
    });
    cleanups.push(() => stack.stop());
    const db = createPool(database.url, 2);
    cleanups.push(() => db.end());

    const client = new ApiClient(stack.base);
    const token = await client.register(`bench-approvals-${process.pid}@example.com`);
    const agent = await client.request<{ id: string }>('POST', '/api/agents', { name: 'payer', configJson: { model: 'bench-model' } });
    await client.request('POST', `/api/agents/${agent.id}/tools`, {
      type: 'custom', name: 'pay', requiresApproval: true,
      configJson: { endpoint: `${tool.url}/pay`, method: 'POST', bodyTemplate: '{{input}}', parameters: { type: 'object', properties: { i: { type: 'number' } } } },
    });

    const waitingCount = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE status = 'waiting'`)).rows[0]!.n;
    // Warm-up: WARM_UP runs through (waited for, approved, finished), so "before" has every code path loaded.
    const warm = await Promise.all(Array.from({ length: WARM_UP }, (_, i) => client.request<{ id: string }>('POST', `/api/agents/${agent.id}/runs`, { input: `run ${RUNS + i}` })));
    await until('the warm-up runs waiting', async () => (await waitingCount()) === WARM_UP, 10 * 60_000);
    const warmApprovals = (await db.query<{ id: string }>(`SELECT id FROM approvals WHERE status = 'pending'`)).rows;
    await Promise.all(warmApprovals.map((a) => client.request('POST', `/api/approvals/${a.id}/decision`, { decision: 'approve' })));
    const succeeded = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE status = 'succeeded'`)).rows[0]!.n;
    await until('the warm-up runs finished', async () => (await succeeded()) === warm.length, 10 * 60_000);

    /** POSTs as the bench's user; a 503 (the API's database pool busy) is sent again after a second, as a client does, and counted. */
    const refused = { count: 0 };
    const post = async (url: string, body: unknown) => {
      for (;;) {
        const res = await fetch(`${stack.base}${url}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        const text = await res.text();
        if (res.ok) return;
        if (res.status !== 503) throw new Error(`POST ${url} answered ${res.status}: ${text}`);
        refused.count++;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    };
    const pids = { worker: stack.worker().pid, api: stack.api().pid };
    const before = { worker: rssMiB(pids.worker), api: rssMiB(pids.api) };
    const made = performance.now();
    await inBatches(RUNS, START_CONCURRENCY, (i) => post(`/api/agents/${agent.id}/runs`, { input: `run ${i}` }));
    say(`run starts answered 503 (database pool busy) and sent again: ${refused.count}`);
    await until(`${RUNS} runs waiting`, async () => (await waitingCount()) === RUNS, 30 * 60_000);
    say(`${RUNS} runs waiting after ${ms(performance.now() - made)}`);
    // Settled: the worker's timers and the API's buffers of the burst are behind it.
    await new Promise((r) => setTimeout(r, 5_000));
    const after = { worker: rssMiB(pids.worker), api: rssMiB(pids.api) };
    for (const which of ['worker', 'api'] as const) {
      say(`${which} RSS: ${before[which].toFixed(0)} MiB before, ${after[which].toFixed(0)} MiB with ${RUNS} runs waiting (${(((after[which] - before[which]) * 1024) / RUNS).toFixed(1)} KiB per waiting run)`);
    }

    // Ours: N decisions at once, each timed from its request to its tool call's arrival.
    const approvals = (await db.query<{ id: string; i: number }>(`SELECT id, (arguments ->> 'i')::int AS i FROM approvals WHERE status = 'pending'`)).rows;
    const sentOurs = new Map<number, number>();
    refused.count = 0;
    await inBatches(approvals.length, IN_FLIGHT, async (n) => {
      const a = approvals[n]!;
      sentOurs.set(a.i, performance.now());
      await post(`/api/approvals/${a.id}/decision`, { decision: 'approve' });
    });
    await until(`${RUNS} tool calls`, () => arrived.ours.size === RUNS, 30 * 60_000);
    const ours = [...sentOurs].map(([i, t0]) => arrived.ours.get(i)! - t0);

    // Bare: N workflows waiting on a signal, on the same dev server; N signals at once.
    const nativeConnection = await NativeConnection.connect({ address: temporal.address });
    cleanups.push(() => nativeConnection.close());
    const bareWorker = await startBareWorker({
      connection: nativeConnection,
      taskQueue: BARE_QUEUE,
      workflowsPath: path.join(__dirname, 'approval-wait-workflow.ts'),
      activities: {
        async bareToolCall(i: number) {
          const res = await fetch(`${tool.url}/bare/${i}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ i }) });
          await res.arrayBuffer();
        },
      },
    });
    cleanups.push(() => bareWorker.stop());
    const connection = await Connection.connect({ address: temporal.address });
    cleanups.push(() => connection.close());
    const temporalClient = new Client({ connection, namespace: 'default' });
    const prefix = `bench-bare-approval-${process.pid}`;
    await inBatches(RUNS, START_CONCURRENCY, (i) => temporalClient.workflow.start('bareApprovalWorkflow', { taskQueue: BARE_QUEUE, workflowId: `${prefix}-${i}`, args: [i] }));
    // Every bare workflow has run its first task (it waits on its condition), as each of ours waits.
    await until('the bare workflows waiting', async () => {
      let waiting = 0;
      for await (const _ of temporalClient.workflow.list({ query: `WorkflowType = 'bareApprovalWorkflow' AND ExecutionStatus = 'Running'` })) waiting++;
      return waiting === RUNS;
    }, 10 * 60_000);
    await new Promise((r) => setTimeout(r, 2_000));
    const sentBare = new Map<number, number>();
    await inBatches(RUNS, IN_FLIGHT, async (i) => {
      sentBare.set(i, performance.now());
      await temporalClient.workflow.getHandle(`${prefix}-${i}`).signal('go');
    });
    await until(`${RUNS} bare activity calls`, () => arrived.bare.size === RUNS, 30 * 60_000);
    const bare = [...sentBare].map(([i, t0]) => arrived.bare.get(i)! - t0);

    const figures = (v: number[]) => ({ p50: percentile(v, 50), p99: percentile(v, 99) });
    const o = figures(ours);
    const b = figures(bare);
    say(`decisions answered 503 (database pool busy) and sent again: ${refused.count}`);
    say(`decision → tool call, ${RUNS} sent ${IN_FLIGHT} at a time: ours p50 ${ms(o.p50)} p99 ${ms(o.p99)}; bare signal → activity p50 ${ms(b.p50)} p99 ${ms(b.p99)}`);
    say(`ours / bare: p50 ${ratio(o.p50, b.p50)}×, p99 ${ratio(o.p99, b.p99)}× (target p99 ≤ 1.5×)`);
    await until('every run finished', async () => (await succeeded()) === RUNS + WARM_UP, 10 * 60_000);
  } finally {
    await cleanups.run();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
