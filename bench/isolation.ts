/**
 * `npm run bench:isolation`: one tenant's runs while another floods the engine (no tenant can stop or
 * flood the engine). The real processes a deployment runs — `api/server.ts` and `worker/main.ts`, each
 * its own process with the default limits — on a Temporal dev server started here (in memory, fairness
 * on, as `npm start` runs it) and a fresh database `bench_<pid>`. Everything goes through the public API.
 *
 * Account A runs a simple agent (no tools) at a steady BENCH_A_RATE runs per second for BENCH_SECONDS:
 * each run `POST /api/agents/:id/runs`, then `GET /api/runs/:id` until `succeeded` (every BENCH_POLL_MS
 * at first, then every tenth of the time waited: a run of ~50 ms is timed to within ~10 ms; at 40 ms,
 * as before, a run a few ms slower could be seen a whole poll later, 50 → 90 ms). That is measured twice, after a 5 s warm-up: alone, then
 * while account B floods with (BENCH_FLOODS picks which):
 * - regex:  a user trigger on `webhook.received` with `{ "payload.s": { "$regex": ".*.*.*.*!" } }` (×
 *           BENCH_REGEX_TRIGGERS), and BENCH_REGEX_EVENTS requests to B's public incoming hook, each a
 *           BENCH_PAYLOAD_CHARS-character `s` the pattern scans to the end and never matches;
 * - chain:  BENCH_CHAIN_WIDTH agents, each with an `agent_finished` trigger with an empty filter (each
 *           fires on every run of B that finishes), then one run: every finish fans out to all of them;
 * - hooks:  BENCH_HOOK_REQUESTS requests to the public hook of a webhook trigger linked to one of those
 *           agents (so the runs they start chain too);
 * - slow:   an outgoing webhook on `webhook.test` whose endpoint (a loopback receiver) answers after
 *           BENCH_SLOW_MS, and BENCH_SLOW_DELIVERIES `POST /api/webhooks/:id/test` (one delivery each).
 * Each flood's requests are spread evenly from 2 s before A's second window to its end (a flooder at
 * its limits all along, not a burst that is over before A starts), at most 50 in flight.
 *
 * Prints A's runs/s delivered, p50 and p99 for both windows, the ratios with/without (throughput, and
 * p50 alone over p50 with: both 1.0 when B costs A nothing, target ≥ 0.8), what B's flood did (answers
 * by status, fires by status, runs, deliveries), and to find out why: where A's run time went (from
 * its workflow histories), the cores each process kept busy (/proc), and the Temporal server's work
 * (its Prometheus metrics: persistence requests, workflow starts, workflow tasks dispatched and their wait;
 * and, from its visibility store, the workflows started during A's window with the flood, by type, with their events).
 * Settings: BENCH_SECONDS (30), BENCH_A_RATE (2), BENCH_FLOODS (regex,chain,hooks,slow),
 * BENCH_REGEX_EVENTS (300), BENCH_REGEX_TRIGGERS (1), BENCH_PAYLOAD_CHARS (5000), BENCH_CHAIN_WIDTH (4),
 * BENCH_HOOK_REQUESTS (1000), BENCH_SLOW_DELIVERIES (200), BENCH_SLOW_MS (5000), BENCH_POLL_MS (10),
 * BENCH_DYNAMIC_CONFIG (comma-separated `key=value` for the dev server, as bench/engine.ts),
 * BENCH_POSTGRES_URL (as bench/kit/stack.ts), BENCH_CPU_PROF (a directory: V8 CPU profiles of the worker and
 * the API, in its `worker/` and `api/`, for bench/profile-summary.ts). Settings of the engine itself (RUN_CONCURRENCY_PER_ACCOUNT,
 * FIRES_PER_MINUTE, …) are passed on to the two processes from the environment.
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import pg from 'pg';
import { ApiClient, postStatus } from './kit/api-client';
import { coresBusyMeter, postgresBackendPids } from './kit/cpu';
import { startReceiver } from './kit/receiver';
import { choiceSetting, rateSetting, setting } from './kit/settings';
import { Cleanups, createBenchDatabase, startApiAndWorker, startDevServer } from './kit/stack';
import { percentile } from './kit/stats';

const SECONDS = Math.max(1, setting('BENCH_SECONDS', 30));
const A_RATE = Math.max(0.1, rateSetting('BENCH_A_RATE', 2));
const REGEX_EVENTS = setting('BENCH_REGEX_EVENTS', 300);
const REGEX_TRIGGERS = setting('BENCH_REGEX_TRIGGERS', 1);
const PAYLOAD_CHARS = setting('BENCH_PAYLOAD_CHARS', 5000);
const CHAIN_WIDTH = setting('BENCH_CHAIN_WIDTH', 4);
const HOOK_REQUESTS = setting('BENCH_HOOK_REQUESTS', 1000);
const SLOW_DELIVERIES = setting('BENCH_SLOW_DELIVERIES', 200);
const SLOW_MS = setting('BENCH_SLOW_MS', 5000);
const FLOODS = new Set(choiceSetting('BENCH_FLOODS', 'regex,chain,hooks,slow', ['regex', 'chain', 'hooks', 'slow'] as const));
const flooding = (name: 'regex' | 'chain' | 'hooks' | 'slow') => FLOODS.has(name);

const HOSTILE_REGEX = '.*.*.*.*!';
const POLL_MS = setting('BENCH_POLL_MS', 10);
const FLOOD_LEAD_MS = 2_000;
const FLOOD_IN_FLIGHT = 50;
const WARMUP_SECONDS = 5;
const UNFINISHED_AFTER_MS = 60_000;
const RATIO_TARGET = 0.8;

const createAgent = (client: ApiClient, name: string) => client.request<{ id: string }>('POST', '/api/agents', { name, status: 'active' });

interface Window {
  runs: number;
  unfinished: number;
  perSecond: number;
  p50: number;
  p99: number;
  runIds: string[];
}

/** Sums of the dev server's Prometheus counters whose name and labels match. */
async function scrape(metricsUrl: string): Promise<(name: string, labels?: RegExp) => number> {
  const text = await (await fetch(metricsUrl)).text();
  return (name, labels = /.*/) => {
    let sum = 0;
    for (const line of text.split('\n')) {
      const m = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
      if (m && m[1] === name && labels.test(m[2] ?? '')) sum += Number(m[3]);
    }
    return sum;
  };
}

/**
 * What the Temporal server did over a window (call at its start, the result at its end): persistence
 * requests per second and their mean time, the mean time of the two calls every run makes (workflow
 * task completed, workflow start) and of the wait for the history shard's IO slots (the dev server has
 * one shard: `history.shardIOConcurrency` slots for all its workflows), workflow starts per second, and
 * workflow tasks dispatched per second with their mean wait for a worker, on the normal queue (a new
 * workflow's first task) and on the worker's sticky queue.
 */
async function serverMeter(metricsUrl: string) {
  const before = await scrape(metricsUrl);
  const t0 = performance.now();
  return async () => {
    const after = await scrape(metricsUrl);
    const seconds = (performance.now() - t0) / 1000;
    const rate = (name: string, labels?: RegExp) => (after(name, labels) - before(name, labels)) / seconds;
    /** A histogram's mean over the window, in ms ('-' when it recorded nothing). */
    const mean = (name: string, labels?: RegExp, digits = 1) => {
      const n = rate(`${name}_count`, labels);
      return n > 0 ? `${((1000 * rate(`${name}_sum`, labels)) / n).toFixed(digits)} ms` : '- ms';
    };
    const wft = (partition: string) => {
      const labels = new RegExp(`partition="${partition}".*task_type="Workflow",taskqueue="agent_platform"`);
      return `${rate('task_schedule_to_start_latency_count', labels).toFixed(1)}/s waiting ${mean('task_schedule_to_start_latency', labels, 0)}`;
    };
    return (
      `Temporal: ${rate('persistence_requests').toFixed(0)} persistence requests/s (mean ${mean('persistence_latency')}; ` +
      `calls: workflow task completed ${mean('service_latency', /operation="RespondWorkflowTaskCompleted"/)}, ` +
      `start ${mean('service_latency', /operation="StartWorkflowExecution"/)}; shard IO wait ${mean('semaphore_latency', /operation="ShardInfo"/)}), ` +
      `${rate('persistence_requests', /operation="CreateWorkflowExecution"/).toFixed(1)} workflow starts/s; ` +
      `workflow tasks ${wft('__normal__')} (first tasks), ${wft('__sticky__')} (sticky)`
    );
  };
}

/** How long to wait before asking again: 40 ms at first, then a tenth of the time waited so far (≤ 10 % error, few requests). */
const pollDelay = (waitedMs: number) => Math.min(1_000, Math.max(POLL_MS, waitedMs / 10));

/**
 * A's runs for `seconds`, one every 1/rate s whatever the others do (an account with a steady load,
 * not one that backs off when the engine is slow): each queued, then polled until it succeeded, for at
 * most UNFINISHED_AFTER_MS after the window (then counted as unfinished, its latency infinite).
 * Answers latency percentiles and runs/s delivered (successes over the time from the first start to
 * the last success: the rate itself while the engine keeps up).
 */
async function measureRuns(a: ApiClient, agentId: string, seconds: number): Promise<Window> {
  const count = Math.max(1, Math.round(seconds * A_RATE));
  const start = performance.now();
  const giveUpAt = start + seconds * 1000 + UNFINISHED_AFTER_MS;
  const runs = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      await sleep(Math.max(0, start + (i * 1000) / A_RATE - performance.now()));
      const t0 = performance.now();
      const { id } = await a.request<{ id: string }>('POST', `/api/agents/${agentId}/runs`, { input: { n: i } });
      for (;;) {
        await sleep(pollDelay(performance.now() - t0));
        const run = await a.request<{ status: string; error: string | null }>('GET', `/api/runs/${id}`);
        if (run.status === 'succeeded') break;
        if (run.status === 'failed') throw new Error(`A's run ${id} failed: ${run.error}`);
        if (performance.now() > giveUpAt) return { id, latency: Infinity, end: giveUpAt };
      }
      const end = performance.now();
      return { id, latency: end - t0, end };
    }),
  );
  const done = runs.filter((r) => r.latency !== Infinity);
  const latencies = runs.map((r) => r.latency);
  const lastEnd = Math.max(...runs.map((r) => r.end));
  return {
    runs: count,
    unfinished: count - done.length,
    perSecond: done.length / ((lastEnd - start) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    runIds: done.map((r) => r.id),
  };
}

/**
 * Sends `count` requests spread evenly over `spanMs` (at most FLOOD_IN_FLIGHT at once); answers the
 * statuses by count, and how many went out before `stop` was aborted.
 */
async function paced(count: number, spanMs: number, send: (i: number) => Promise<number>, stop: AbortSignal) {
  const statuses: Record<string, number> = {};
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();
  let sent = 0;
  for (let i = 0; i < count && !stop.aborted; i++) {
    const due = start + (i * spanMs) / count;
    if (due > performance.now()) await sleep(due - performance.now());
    while (inFlight.size >= FLOOD_IN_FLIGHT) await Promise.race(inFlight);
    if (stop.aborted) break;
    sent++;
    const p: Promise<void> = send(i)
      .then(
        (status) => void (statuses[status] = (statuses[status] ?? 0) + 1),
        (err: Error) => void (statuses[`error ${err.message}`] = (statuses[`error ${err.message}`] ?? 0) + 1),
      )
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  return { sent, statuses };
}

/** B's resources for every flood chosen: created through the API before anything is measured. */
async function setUpB(b: ApiClient, slowUrl: string) {
  const chainAgents: string[] = [];
  for (let i = 0; i < Math.max(CHAIN_WIDTH, flooding('hooks') || flooding('chain') ? 1 : 0); i++) chainAgents.push((await createAgent(b, `chain ${i}`)).id);
  if (flooding('chain')) {
    for (const agentId of chainAgents.slice(0, CHAIN_WIDTH)) {
      await b.request('POST', `/api/agents/${agentId}/triggers`, { type: 'agent_finished', name: 'every finish', configJson: { eventFilter: {} } });
    }
  }
  let incomingUrl = '';
  if (flooding('regex')) {
    const incoming = await b.request<{ id: string }>('POST', '/api/webhooks', { name: 'incoming', direction: 'incoming' });
    incomingUrl = `${b.base}/api/hooks/webhooks/${incoming.id}`;
    for (let i = 0; i < REGEX_TRIGGERS; i++) {
      await b.request('POST', '/api/user-triggers', {
        type: 'event',
        name: `hostile ${i}`,
        configJson: { eventType: 'webhook.received', eventFilter: { 'payload.s': { $regex: HOSTILE_REGEX } } },
      });
    }
  }
  let hook = { url: '', token: '' };
  if (flooding('hooks')) {
    const trigger = await b.request<{ hookUrl: string; configJson: { secretToken: string } }>('POST', `/api/agents/${chainAgents[0]}/triggers`, {
      type: 'webhook',
      name: 'public hook',
    });
    hook = { url: trigger.hookUrl, token: trigger.configJson.secretToken };
  }
  let slowWebhookId = '';
  if (flooding('slow')) {
    slowWebhookId = (await b.request<{ id: string }>('POST', '/api/webhooks', { name: 'slow', url: slowUrl, events: ['webhook.test'] })).id;
  }
  return { chainAgents, incomingUrl, hook, slowWebhookId };
}

/** B's floods, each spread over `spanMs`; resolves with what each sent and how it was answered. */
function startFloods(b: ApiClient, setup: Awaited<ReturnType<typeof setUpB>>, spanMs: number, stop: AbortSignal) {
  const floods: Array<Promise<[string, string]>> = [];
  const show = (r: Awaited<ReturnType<typeof paced>>) =>
    `${r.sent} sent; answers ${Object.entries(r.statuses).map(([s, n]) => `${s}: ${n}`).join(', ')}`;
  if (flooding('regex')) {
    const payload = { s: 'a'.repeat(PAYLOAD_CHARS) };
    floods.push(paced(REGEX_EVENTS, spanMs, () => postStatus(setup.incomingUrl, payload), stop).then((r) => ['regex', show(r)]));
  }
  if (flooding('chain')) {
    floods.push(b.request('POST', `/api/agents/${setup.chainAgents[0]}/runs`, { input: 'chain' }).then(() => ['chain', '1 run queued']));
  }
  if (flooding('hooks')) {
    const headers = { 'x-trigger-token': setup.hook.token };
    floods.push(paced(HOOK_REQUESTS, spanMs, (i) => postStatus(setup.hook.url, { i }, headers), stop).then((r) => ['hooks', show(r)]));
  }
  if (flooding('slow')) {
    const send = () => b.request('POST', `/api/webhooks/${setup.slowWebhookId}/test`, undefined, [202]).then(() => 202);
    floods.push(paced(SLOW_DELIVERIES, spanMs, send, stop).then((r) => ['slow', `${show(r)} (POST /api/webhooks/:id/test)`]));
  }
  return Promise.all(floods);
}

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/**
 * Where A's runs spent their time, from their workflows' histories (medians per run, ms): from the run's
 * row to its workflow's start (the outbox hand-off), waiting in Temporal's task queues for a worker
 * (scheduled → started: what task-queue fairness governs) and being worked on by the worker (started →
 * completed: its event loop, its pool, Postgres), for workflow tasks and activities.
 */
async function whereTimeWent(client: Client, databaseUrl: string, runIds: string[]): Promise<string> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const created = new Map(
    (await db.query<{ id: string; created_at: Date }>(`SELECT id, created_at FROM runs WHERE id = ANY($1::uuid[])`, [runIds])).rows.map((r) => [r.id, r.created_at.getTime()]),
  );
  await db.end();
  const parts = { handOff: [] as number[], firstWftWait: [] as number[], wftWait: [] as number[], wftWork: [] as number[], actWait: [] as number[], actWork: [] as number[], total: [] as number[] };
  for (const id of runIds) {
    const { events } = await client.workflow.getHandle(`run:${id}`).fetchHistory();
    const byId = new Map<number, HistoryEvent>((events ?? []).map((e) => [Number(e.eventId), e]));
    const at = (e: HistoryEvent | undefined) => tsToMs(e?.eventTime);
    const sums = { firstWftWait: NaN, wftWait: 0, wftWork: 0, actWait: 0, actWork: 0 };
    let first = 0;
    let last = 0;
    for (const e of events ?? []) {
      if (e.workflowExecutionStartedEventAttributes) first = at(e);
      last = Math.max(last, at(e)); // the run row is done a moment before its workflow completes
      const wftStarted = e.workflowTaskStartedEventAttributes;
      if (wftStarted) {
        const waited = at(e) - at(byId.get(Number(wftStarted.scheduledEventId)));
        if (Number.isNaN(sums.firstWftWait)) sums.firstWftWait = waited;
        sums.wftWait += waited;
      }
      const wftDone = e.workflowTaskCompletedEventAttributes;
      if (wftDone) sums.wftWork += at(e) - at(byId.get(Number(wftDone.startedEventId)));
      const actStarted = e.activityTaskStartedEventAttributes;
      if (actStarted) sums.actWait += at(e) - at(byId.get(Number(actStarted.scheduledEventId)));
      const actDone = e.activityTaskCompletedEventAttributes;
      if (actDone) sums.actWork += at(e) - at(byId.get(Number(actDone.startedEventId)));
    }
    parts.handOff.push(first - created.get(id)!);
    parts.total.push(last - created.get(id)!);
    for (const k of Object.keys(sums) as Array<keyof typeof sums>) parts[k].push(sums[k]);
  }
  const m = (values: number[]) => percentile(values, 50).toFixed(0).padStart(6);
  return (
    `${m(parts.total)} = hand-off ${m(parts.handOff)} + workflow tasks waiting ${m(parts.wftWait)} (the first ${m(parts.firstWftWait)}), worked ${m(parts.wftWork)}` +
    ` + activities waiting ${m(parts.actWait)}, worked ${m(parts.actWork)} (+ the rest: timers, signals, gaps)`
  );
}

/** What B's flood made of the engine, read from the database at the end. */
async function floodOutcome(databaseUrl: string, accountId: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const count = async (sql: string) =>
      (await db.query<{ k: string; n: number }>(sql, [accountId])).rows.map((r) => `${r.k}: ${r.n}`).join(', ') || 'none';
    return [
      `    B's fires     ${await count(`SELECT source || ' ' || status AS k, count(*)::int AS n FROM fires WHERE account_id = $1 GROUP BY 1 ORDER BY 1`)}`,
      `    B's runs      ${await count(`SELECT status AS k, count(*)::int AS n FROM runs WHERE account_id = $1 GROUP BY 1 ORDER BY 1`)}`,
      `    B's events    ${await count(`SELECT type || ' ' || coalesce(dispatch_status, 'pending') AS k, count(*)::int AS n FROM events WHERE account_id = $1 GROUP BY 1 ORDER BY 1`)}`,
      `    B's deliveries ${await count(`SELECT status AS k, count(*)::int AS n FROM deliveries WHERE account_id = $1 GROUP BY 1 ORDER BY 1`)}`,
    ];
  } finally {
    await db.end();
  }
}

async function main() {
  const started = performance.now();
  const loadBefore = os.loadavg()[0]!;
  const cleanups = new Cleanups();
  const stopFlood = new AbortController();
  try {
    const database = await createBenchDatabase();
    cleanups.push(database.drop);
    const temporal = await startDevServer();
    cleanups.push(temporal.stop);
    const slow = await startReceiver(() => ({ delayMs: SLOW_MS }));
    cleanups.push(slow.close);
    // Agents cost 100 each: room for a wide chain.
    const stack = await startApiAndWorker(database.url, temporal.address, { INITIAL_BALANCE: '1000000' });
    cleanups.push(stack.stop);
    const base = stack.base;
    const metricsUrl = temporal.metricsUrl;

    const connection = await Connection.connect({ address: temporal.address });
    cleanups.push(() => connection.close());
    const client = new Client({ connection });
    const a = new ApiClient(base);
    await a.register('a@bench.example');
    const aAgent = await createAgent(a, 'simple');
    const b = new ApiClient(base);
    await b.register('b@bench.example');
    const bSetup = await setUpB(b, `${slow.url}/slow`);
    const bAccount = (await b.request<{ id: string }>('GET', '/api/account')).id;

    const pids = () => ({
      worker: [stack.worker().pid],
      api: [stack.api().pid],
      'Temporal dev server': temporal.pid ? [temporal.pid] : [],
      Postgres: postgresBackendPids(database.name),
      'this bench': [process.pid],
    });
    await measureRuns(a, aAgent.id, WARMUP_SECONDS);
    const aloneCpu = coresBusyMeter(pids);
    const aloneServer = await serverMeter(metricsUrl);
    const alone = await measureRuns(a, aAgent.id, SECONDS);
    const aloneCpuLine = aloneCpu();
    const aloneServerLine = await aloneServer();

    const floods = startFloods(b, bSetup, FLOOD_LEAD_MS + SECONDS * 1000, stopFlood.signal);
    await sleep(FLOOD_LEAD_MS);
    const floodCpu = coresBusyMeter(pids);
    const floodServer = await serverMeter(metricsUrl);
    const floodFrom = new Date();
    const withFlood = await measureRuns(a, aAgent.id, SECONDS);
    const floodTo = new Date();
    const floodCpuLine = floodCpu();
    const floodServerLine = await floodServer();
    stopFlood.abort();
    const floodLines = await floods;

    const ms = (v: number) => (v === Infinity ? 'never' : v.toFixed(0)).padStart(8);
    const row = (label: string, w: Window) =>
      `  ${label.padEnd(18)} ${String(w.runs).padStart(5)} ${String(w.unfinished).padStart(10)} ${w.perSecond.toFixed(2).padStart(8)} ${ms(w.p50)} ${ms(w.p99)}`;
    const throughput = withFlood.perSecond / alone.perSecond;
    const p50 = alone.p50 / withFlood.p50;
    const verdict = (r: number) => (r >= RATIO_TARGET ? 'ok' : 'BELOW TARGET');
    console.log(
      [
        `isolation: account A's runs (POST /api/agents/:id/runs, then GET /api/runs/:id until succeeded), ${A_RATE} per second for ${SECONDS} s, alone then while B floods` +
          ` (unfinished: not succeeded ${UNFINISHED_AFTER_MS / 1000} s after the window)`,
        `  ${''.padEnd(18)} ${'runs'.padStart(5)} ${'unfinished'.padStart(10)} ${'runs/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`,
        row('A alone', alone),
        row('A while B floods', withFlood),
        `  ratio with/without: throughput ${throughput.toFixed(2)} (${verdict(throughput)}), p50 ${p50.toFixed(2)} (alone/with; ${verdict(p50)}), p99 ${(alone.p99 / withFlood.p99).toFixed(2)}; target ≥ ${RATIO_TARGET}`,
        `B's flood (${[...FLOODS].join(', ')}), spread over ${((FLOOD_LEAD_MS + SECONDS * 1000) / 1000).toFixed(0)} s:`,
        ...floodLines.map(([name, what]) => `    ${name.padEnd(13)} ${what}`),
        ...(flooding('slow') ? [`    slow endpoint received ${slow.received()} attempts (answers after ${SLOW_MS} ms)`] : []),
        ...(await floodOutcome(database.url, bAccount)),
        `A's finished runs, medians in ms (run row → workflow completed):`,
        `    alone        ${await whereTimeWent(client, database.url, alone.runIds)}`,
        `    with flood   ${await whereTimeWent(client, database.url, withFlood.runIds)}`,
        `  alone:      ${aloneCpuLine}`,
        `              ${aloneServerLine}`,
        `  with flood: ${floodCpuLine}`,
        `              ${floodServerLine}`,
        `              ${await workflowsStarted(client, floodFrom, floodTo)}`,
        `  settings: BENCH_REGEX_EVENTS=${REGEX_EVENTS} BENCH_REGEX_TRIGGERS=${REGEX_TRIGGERS} BENCH_PAYLOAD_CHARS=${PAYLOAD_CHARS} BENCH_CHAIN_WIDTH=${CHAIN_WIDTH} ` +
          `BENCH_HOOK_REQUESTS=${HOOK_REQUESTS} BENCH_SLOW_DELIVERIES=${SLOW_DELIVERIES} BENCH_SLOW_MS=${SLOW_MS}`,
        `  ${os.cpus().length} cores, load average ${loadBefore.toFixed(1)} at start, ${os.loadavg()[0]!.toFixed(1)} at end; ${((performance.now() - started) / 1000).toFixed(0)} s in all`,
      ].join('\n'),
    );
  } finally {
    stopFlood.abort();
    await cleanups.run();
  }
}

/** The workflows started in A's window with B's flood, by type: how many, and their history events (each a write of the server's). */
async function workflowsStarted(client: Client, from: Date, to: Date): Promise<string> {
  // Visibility keeps a workflow's history length only once it has closed: events are averaged over the closed ones.
  const byType = new Map<string, { n: number; open: number; events: number }>();
  const query = `StartTime >= '${from.toISOString()}' AND StartTime < '${to.toISOString()}'`;
  for await (const wf of client.workflow.list({ query })) {
    const t = byType.get(wf.type) ?? { n: 0, open: 0, events: 0 };
    t.n++;
    if (wf.closeTime) t.events += wf.historyLength;
    else t.open++;
    byType.set(wf.type, t);
  }
  const parts = [...byType]
    .sort((x, y) => y[1].n - x[1].n)
    .map(([type, t]) => `${type} ${t.n} (${t.open} still open; ${t.n > t.open ? (t.events / (t.n - t.open)).toFixed(1) : '–'} events each of the closed)`);
  return `workflows started (both accounts): ${parts.join(', ') || 'none'}`;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
