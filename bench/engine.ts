/**
 * `npm run bench:engine`: the durable engine on a real Temporal dev server (started here) and a fresh
 * database `bench_<pid>`, each figure printed beside the bare Temporal figure it is bounded by, measured
 * in the same run on the same server, and their ratio.
 *
 * (a) Deliveries (BENCH_DELIVERY_SERVERS): BENCH_EVENTS events emitted as the API emits them (the event
 *     row and its fan-out in one transaction, then the hand-off) to one outgoing webhook with a secret;
 *     a loopback receiver verifies every signature with `standardwebhooks`. Deliveries/s for a burst, and
 *     p50/p99 from emit to receipt for a paced run (BENCH_RATE events/s). Beside it, bare Temporal: one
 *     workflow + one activity POSTing to the same receiver per event (task queue `bench-raw`), started the
 *     way our hand-off starts a workflow, burst and paced alike. Ours per event: the first attempt made by
 *     the process that wrote the event (no workflow); and, on a second webhook whose receiver refuses
 *     every first attempt, the delivery workflow that makes the second (WEBHOOK_RETRY_SCHEDULE 0s,0s).
 * (b) Cron (BENCH_SERVERS): BENCH_TRIGGERS cron triggers `* * * * *` (their schedules synced through the
 *     outbox), observed for BENCH_MINUTES whole minutes: the lag from the scheduled time to the fire's
 *     record (the transaction that counts it), p50/p99. Then, alone on the same server, BENCH_TRIGGERS
 *     bare Schedules `* * * * *` starting an empty workflow: the lag from the scheduled time to that
 *     workflow's completion (its first and only workflow task, where our fire records itself) and to its
 *     start. Both on the in-memory dev server and on the SQLite-file one that `npm start` runs.
 *
 * Settings: BENCH_EVENTS (500), BENCH_RATE (20), BENCH_TRIGGERS (1000), BENCH_MINUTES (1),
 * BENCH_SCENARIOS (deliveries,cron), BENCH_SERVERS (memory,file), BENCH_DELIVERY_SERVERS (memory).
 * Worker tuning runs: BENCH_WORKER / BENCH_DELIVERY_WORKER (JSON worker options over ours, for our main
 * and delivery workers; BENCH_WORKER applies to the bare worker too), BENCH_DYNAMIC_CONFIG (comma-separated
 * `key=value` for the dev server), BENCH_SQLITE_PRAGMAS (comma-separated `name=value` for the SQLite file,
 * `sqlite` for SQLite's own; default as `npm start`: scripts/temporal-dev-server.ts SQLITE_PRAGMAS). One process runs the worker, the receiver and the load, as `npm start`
 * runs the worker beside Temporal and Postgres on one machine.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { DefaultLogger, Runtime, type WorkerOptions } from '@temporalio/worker';
import { Webhook } from 'standardwebhooks';
import { withTransaction, type Db } from '../db/pool';
import { createEventsRepository } from '../db/repositories/events';
import { createSecretBox } from '../lib/secrets';
import { DEV_STACK_RETENTION } from '../scripts/temporal-dev-server';
import { startReceiver as startLoopbackReceiver } from './kit/receiver';
import { choiceSetting, jsonSetting, listSetting, rateSetting, setting } from './kit/settings';
import { Cleanups, createBenchDatabase, startBareWorker, startDevServer, startInProcessEngine, type InProcessEngine } from './kit/stack';
import { ms, percentile, ratio } from './kit/stats';

const EVENTS = setting('BENCH_EVENTS', 500);
const RATE = rateSetting('BENCH_RATE', 20);
const TRIGGERS = setting('BENCH_TRIGGERS', 1000);
const MINUTES = setting('BENCH_MINUTES', 1);
const SCENARIOS = new Set(choiceSetting('BENCH_SCENARIOS', 'deliveries,cron', ['deliveries', 'cron']));
const SERVERS = choiceSetting('BENCH_SERVERS', 'memory,file', ['memory', 'file']);
const DELIVERY_SERVERS = new Set(choiceSetting('BENCH_DELIVERY_SERVERS', 'memory', ['memory', 'file']));
const WORKER_TUNING = jsonSetting<WorkerOptions>('BENCH_WORKER');
const DELIVERY_TUNING = jsonSetting<WorkerOptions>('BENCH_DELIVERY_WORKER');
const SQLITE_PRAGMAS = process.env.BENCH_SQLITE_PRAGMAS === 'sqlite' ? [] : process.env.BENCH_SQLITE_PRAGMAS ? listSetting('BENCH_SQLITE_PRAGMAS', '') : undefined;
const SECRET = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;
const RAW_QUEUE = 'bench-raw';
/** After the last observed minute: how long fires and bare workflows may take to be recorded at most. */
const SETTLE_MS = 180_000;

/** Loopback receiver: verifies each signed request, records the first arrival per webhook-id. */
async function startReceiver() {
  const verifier = new Webhook(SECRET);
  const arrivals = new Map<string, number>();
  const refused = new Set<string>();
  let badSignatures = 0;
  let repeats = 0;
  const receiver = await startLoopbackReceiver(({ url, headers, body, at }) => {
    const id = (headers['webhook-id'] as string | undefined) ?? `anonymous-${randomUUID()}`;
    if (headers['webhook-signature']) {
      try {
        verifier.verify(body, headers as Record<string, string>);
      } catch {
        badSignatures++;
      }
    }
    // `?refuse-first`: the first request of each webhook-id is answered 503 (and not counted as arrived).
    if (url.endsWith('?refuse-first') && !refused.has(id)) {
      refused.add(id);
      return { status: 503 };
    }
    if (arrivals.has(id)) repeats++;
    else arrivals.set(id, at);
  });
  return { url: `${receiver.url}/hook`, arrivals, bad: () => badSignatures, repeats: () => repeats, close: receiver.close };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A user and its account, straight in SQL: the bench measures the engine, not registration. */
async function createBenchAccount(db: Db): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `WITH u AS (INSERT INTO users (email, password_hash, name) VALUES ($1, 'x', 'bench') RETURNING id)
     INSERT INTO accounts (owner_user_id, name, balance) SELECT id, 'bench', 0 FROM u RETURNING id`,
    [`bench-${randomUUID()}@example.com`],
  );
  return rows[0]!.id;
}

/** Waits until every id has arrived (or throws after timeoutMs). */
async function arrived(receiver: Receiver, ids: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (ids.some((id) => !receiver.arrivals.has(id))) {
    if (Date.now() > deadline) throw new Error(`only ${ids.filter((id) => receiver.arrivals.has(id)).length}/${ids.length} deliveries arrived`);
    await sleep(10);
  }
}

/** `count` emits, 25 at a time; deliveries/s from the first emit to the last arrival. */
async function burst(receiver: Receiver, count: number, emit: () => Promise<string>): Promise<number> {
  const start = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < count; i += 25) ids.push(...(await Promise.all(Array.from({ length: Math.min(25, count - i) }, emit))));
  await arrived(receiver, ids, 600_000);
  return count / ((Math.max(...ids.map((id) => receiver.arrivals.get(id)!)) - start) / 1000);
}

/** `count` emits at `rate` per second; the latencies from each emit to its arrival. */
async function paced(receiver: Receiver, count: number, rate: number, emit: () => Promise<string>): Promise<number[]> {
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    pending.push(
      emit().then(async (id) => {
        // One not there after two minutes counts as 2 min (p99 shows it) rather than stopping the bench.
        await arrived(receiver, [id], 120_000).catch(() => {});
        latencies.push((receiver.arrivals.get(id) ?? performance.now()) - t0);
      }),
    );
    await sleep(Math.max(0, start + ((i + 1) * 1000) / rate - performance.now()));
  }
  await Promise.all(pending);
  return latencies;
}

type Stack = InProcessEngine & { label: string };

async function benchDeliveries(stack: Stack, receiver: Receiver): Promise<string[]> {
  const { db, engine, client } = stack;
  const secrets = createSecretBox(stack.config.secretsKey);
  // Our events are typed `bench.event` to a webhook subscribed to it; the event catalog is an API concern.
  const emitter = async (url: string) => {
    const accountId = await createBenchAccount(db);
    await db.query(`INSERT INTO webhooks (account_id, name, direction, url, secret_sealed, events) VALUES ($1, 'bench', 'outgoing', $2, $3, $4)`, [
      accountId, url, secrets.seal(SECRET), ['bench.event'],
    ]);
    const { fanOut } = engine.composed;
    const events = createEventsRepository(db);
    return async () => {
      const { id, held } = await withTransaction(db, async (tx) => {
        const event = await events.insertEvent({ accountId, type: 'bench.event', data: { n: 1 } }, tx);
        return { id: event.id, held: (await fanOut.fanOutEvent(tx, event)).held };
      });
      engine.handOff.kick(held);
      return id;
    };
  };
  // Ours as the API emits an event: the first attempt made by the process that wrote it.
  const ours = await emitter(receiver.url);
  // Ours when every delivery needs its workflow: the receiver refuses each first attempt (503), and the
  // delivery's workflow makes the second at once (WEBHOOK_RETRY_SCHEDULE 0s,0s in this bench).
  const viaWorkflow = await emitter(`${receiver.url}?refuse-first`);
  const body = JSON.stringify({ id: randomUUID(), type: 'bench.event', data: { n: 1 } });
  const bare = async () => {
    const id = randomUUID();
    await client.workflow.start('rawDeliveryWorkflow', { taskQueue: RAW_QUEUE, workflowId: `raw-${id}`, args: [receiver.url, body, id] });
    return id;
  };

  // Warm-up (bundles loaded, connections open), then each alone: bare first, ours, and bare again.
  await burst(receiver, 20, ours);
  await burst(receiver, 20, bare);
  await burst(receiver, 20, viaWorkflow);
  const bareBurst = [await burst(receiver, EVENTS, bare)];
  const oursBurst = await burst(receiver, EVENTS, ours);
  const workflowBurst = await burst(receiver, EVENTS, viaWorkflow);
  bareBurst.push(await burst(receiver, EVENTS, bare));
  const bareRate = (bareBurst[0]! + bareBurst[1]!) / 2;
  const pacedCount = Math.min(EVENTS, RATE * 10);
  const oursLatency = await paced(receiver, pacedCount, RATE, ours);
  const bareLatency = await paced(receiver, pacedCount, RATE, bare);
  const workflowLatency = await paced(receiver, pacedCount, RATE, viaWorkflow);

  return [
    `(a) event → signed delivery received, ${stack.label} dev server (${EVENTS} events burst; ${pacedCount} paced at ${RATE}/s)`,
    `    deliveries/s   ours ${oursBurst.toFixed(1)}   bare workflow+activity ${bareRate.toFixed(1)} (${bareBurst.map((r) => r.toFixed(1)).join(' before, ')} after)   ratio ${ratio(oursBurst, bareRate)}`,
    `                   ours through the delivery workflow (first attempt refused) ${workflowBurst.toFixed(1)}   ratio ${ratio(workflowBurst, bareRate)}`,
    `    latency p50    ours ${ms(percentile(oursLatency, 50))}   bare ${ms(percentile(bareLatency, 50))}   through the workflow ${ms(percentile(workflowLatency, 50))}`,
    `    latency p99    ours ${ms(percentile(oursLatency, 99))}   bare ${ms(percentile(bareLatency, 99))}   through the workflow ${ms(percentile(workflowLatency, 99))}`,
    `    bad signatures ${receiver.bad()}, repeated deliveries ${receiver.repeats()}`,
  ];
}

/** The whole minutes to observe: starting at the next minute boundary at least 5 s away. */
function nextMinutes(): { first: number; end: number } {
  const first = Math.ceil((Date.now() + 5_000) / 60_000) * 60_000;
  return { first, end: first + MINUTES * 60_000 };
}

async function benchOurCron(stack: Stack): Promise<{ lines: string[]; lags: number[] }> {
  const { db, engine } = stack;
  // Spread over accounts of at most 100 triggers each: one account's FIRES_PER_MINUTE (600) would throttle the rest.
  const accountIds: string[] = [];
  for (let i = 0; i < Math.ceil(TRIGGERS / 100); i++) accountIds.push(await createBenchAccount(db));
  const syncStart = performance.now();
  // The database trigger on `triggers` queues each schedule's sync in the insert's transaction.
  await db.query(
    `INSERT INTO triggers (account_id, scope, type, name, config_json)
     SELECT ($1::uuid[])[1 + (g - 1) / 100], 'user', 'cron', 'bench ' || g,
       '{"cronExpression":"* * * * *","timezone":"UTC","overlapPolicy":"skip","catchupWindow":"1h"}'
     FROM generate_series(1, $2) g`,
    [accountIds, TRIGGERS],
  );
  const pendingSyncs = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE kind = 'schedule'`)).rows[0]!.n;
  while ((await pendingSyncs()) > 0) {
    await engine.handOff.drain();
    await sleep(200);
  }
  const syncSeconds = (performance.now() - syncStart) / 1000;

  const { first, end } = nextMinutes();
  await sleep(end - Date.now());
  const expected = TRIGGERS * MINUTES;
  const recorded = async () => {
    const { rows } = await db.query<{ lag: number }>(
      `SELECT extract(epoch FROM (f.created_at - f.scheduled_at)) * 1000 AS lag
       FROM fires f WHERE f.account_id = ANY($1) AND f.status = 'fired' AND f.scheduled_at >= $2 AND f.scheduled_at < $3`,
      [accountIds, new Date(first), new Date(end)],
    );
    return rows.map((r) => Number(r.lag));
  };
  let lags = await recorded();
  for (const deadline = Date.now() + SETTLE_MS; lags.length < expected && Date.now() < deadline; lags = await recorded()) await sleep(1_000);
  const counted = await db.query<{ n: number }>(`SELECT sum(fire_count)::int AS n FROM triggers WHERE account_id = ANY($1)`, [accountIds]);

  // Its schedules go (deleted through the outbox), so the bare schedules run alone.
  await db.query(`DELETE FROM triggers WHERE account_id = ANY($1)`, [accountIds]);
  while ((await pendingSyncs()) > 0) {
    await engine.handOff.drain();
    await sleep(200);
  }
  return {
    lags,
    lines: [
      `    ours: schedules synced in ${syncSeconds.toFixed(1)} s; ${lags.length}/${expected} fires recorded; fireCount total ${counted.rows[0]!.n}`,
    ],
  };
}

async function benchBareCron(stack: Stack): Promise<{ lines: string[]; closeLags: number[]; startLags: number[] }> {
  const { client } = stack;
  const run = randomUUID().slice(0, 8);
  const ids = Array.from({ length: TRIGGERS }, (_, i) => `bench-empty-${run}-${i}`);
  const createStart = performance.now();
  const queue = [...ids];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        await client.schedule.create({
          scheduleId: id,
          spec: { cronExpressions: ['0 * * * * * *'] },
          action: { type: 'startWorkflow', workflowType: 'benchEmptyWorkflow', workflowId: id, taskQueue: RAW_QUEUE },
          policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1h' },
        });
      }
    }),
  );
  const createSeconds = (performance.now() - createStart) / 1000;

  const { first, end } = nextMinutes();
  await sleep(end - Date.now());
  const expected = TRIGGERS * MINUTES;
  const observed = async () => {
    const closeLags: number[] = [];
    const startLags: number[] = [];
    for await (const wf of client.workflow.list({ query: `WorkflowType = 'benchEmptyWorkflow' AND WorkflowId STARTS_WITH 'bench-empty-${run}-'` })) {
      const m = /-(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/.exec(wf.workflowId);
      const scheduled = m ? Date.parse(m[1]!) : NaN;
      if (!(scheduled >= first && scheduled < end)) continue;
      startLags.push(wf.startTime.getTime() - scheduled);
      if (wf.closeTime) closeLags.push(wf.closeTime.getTime() - scheduled);
    }
    return { closeLags, startLags };
  };
  let seen = await observed();
  for (const deadline = Date.now() + SETTLE_MS; seen.closeLags.length < expected && Date.now() < deadline; seen = await observed()) await sleep(2_000);

  await Promise.all(
    Array.from({ length: 8 }, async (_, lane) => {
      for (let i = lane; i < ids.length; i += 8) await client.schedule.getHandle(ids[i]!).delete().catch(() => {});
    }),
  );
  return {
    ...seen,
    lines: [`    bare: schedules created in ${createSeconds.toFixed(1)} s; ${seen.closeLags.length}/${expected} empty workflows completed`],
  };
}

async function benchCron(stack: Stack): Promise<string[]> {
  const ours = await benchOurCron(stack);
  const bare = await benchBareCron(stack);
  const row = (label: string, p: number) =>
    `    lag p${p}   fire recorded ${ms(percentile(ours.lags, p))}   bare schedule: workflow completed ${ms(percentile(bare.closeLags, p))} (started ${ms(percentile(bare.startLags, p))})   ratio ${ratio(percentile(ours.lags, p), percentile(bare.closeLags, p))}`;
  return [
    `(b) ${TRIGGERS} cron triggers "* * * * *", ${MINUTES} whole minute(s), ${stack.label} dev server`,
    ...ours.lines,
    ...bare.lines,
    row('50', 50),
    row('99', 99),
  ];
}

/** The SQLite file's size with its write-ahead log (none with SQLite's own rollback journal). */
function sqliteBytes(file: string): number {
  return [file, `${file}-wal`].reduce((sum, f) => sum + (existsSync(f) ? statSync(f).size : 0), 0);
}

async function withStack<T>(kind: 'memory' | 'file', fn: (stack: Stack) => Promise<T>): Promise<T> {
  const cleanups = new Cleanups();
  try {
    const database = await createBenchDatabase();
    cleanups.push(database.drop);
    const dir = kind === 'file' ? mkdtempSync(path.join(tmpdir(), 'bench-temporal-')) : undefined;
    const file = dir && path.join(dir, 'temporal.db');
    if (dir) cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // As `npm start` runs it: closed workflows kept for DEV_STACK_RETENTION (15 minutes).
    const temporal = await startDevServer({ file, retention: file ? DEV_STACK_RETENTION : undefined, sqlitePragmas: SQLITE_PRAGMAS });
    cleanups.push(temporal.stop);
    const engine = await startInProcessEngine(database.url, temporal.address, { RECONCILE_INTERVAL_MS: '1000', WEBHOOK_RETRY_SCHEDULE: '0s,0s' }, { main: WORKER_TUNING, deliveries: DELIVERY_TUNING });
    cleanups.push(engine.stop);
    const bare = await startBareWorker({
      connection: engine.connection,
      taskQueue: RAW_QUEUE,
      workflowsPath: require.resolve('./raw-workflows'),
      tuning: WORKER_TUNING,
      activities: {
        async rawPost(url: string, body: string, id: string) {
          const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-id': id } });
          return res.status;
        },
      },
    });
    cleanups.push(bare.stop);
    if (file) cleanups.push(() => console.log(`    (${path.basename(file)} ${(sqliteBytes(file) / 2 ** 20).toFixed(0)} MiB at the end, with its write-ahead log)`));
    return await fn({ ...engine, label: kind === 'file' ? 'SQLite-file' : 'in-memory' });
  } finally {
    await cleanups.run();
  }
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const receiver = await startReceiver();
  console.log(
    `bench:engine — worker tuning ${JSON.stringify(WORKER_TUNING)}, delivery worker ${JSON.stringify(DELIVERY_TUNING)}, dynamic config ${JSON.stringify(listSetting('BENCH_DYNAMIC_CONFIG', ''))}`,
  );
  try {
    for (const kind of SERVERS) {
      await withStack(kind, async (stack) => {
        if (SCENARIOS.has('deliveries') && DELIVERY_SERVERS.has(kind)) console.log((await benchDeliveries(stack, receiver)).join('\n'));
        if (SCENARIOS.has('cron')) console.log((await benchCron(stack)).join('\n'));
      });
    }
  } finally {
    await receiver.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
