/**
 * `npm run bench:engine`: the durable engine on a real Temporal dev server (started here, in memory)
 * and a fresh database `bench_<pid>`.
 *
 * (a) Deliveries: BENCH_EVENTS events emitted as the API does (event row + outbox in one transaction,
 *     then a hand-off) to one outgoing webhook with a secret; a loopback receiver verifies every
 *     signature with `standardwebhooks`. Reports deliveries/s for a burst, and p50/p99 latency from
 *     emit to receipt for a paced run (BENCH_RATE events/s). Beside it, the same count of bare
 *     Temporal workflow+activity pairs whose activity POSTs to the same receiver (task queue
 *     `bench-raw`), and the ratio. Our pipeline per event: dispatch workflow + fan-out activity, then
 *     delivery workflow + attempt activity, each writing Postgres.
 * (b) Cron: BENCH_TRIGGERS cron triggers `* * * * *` (schedules synced through the outbox), observed
 *     for BENCH_MINUTES whole minutes: fires per minute, and lag from the scheduled time to the fire
 *     record (the transaction that increments fireCount), p50/p99.
 *
 * Settings: BENCH_EVENTS (500), BENCH_RATE (20), BENCH_TRIGGERS (1000), BENCH_MINUTES (2),
 * BENCH_SCENARIOS (deliveries,cron). One process runs the worker, the receiver and the load, as
 * `npm start` runs the worker beside Temporal and Postgres on one machine.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Webhook } from 'standardwebhooks';
import { createPool, withTransaction, type Db } from '../db/pool';
import { insertEvent } from '../db/repositories/events';
import { loadConfig } from '../lib/config';
import { startEventDispatch } from '../lib/engine-starts';
import { createSecretBox } from '../lib/secrets';
import { startTemporalDevServer } from '../scripts/temporal-dev-server';
import { findFreePort } from '../scripts/processes';
import { bundleWorkflows, createEngine } from '../worker/worker';
import { createBenchDatabase } from './database';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 500);
const RATE = Number(process.env.BENCH_RATE ?? 20);
const TRIGGERS = Number(process.env.BENCH_TRIGGERS ?? 1000);
const MINUTES = Number(process.env.BENCH_MINUTES ?? 2);
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? 'deliveries,cron').split(','));
const SECRET = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
};

/** Loopback receiver: verifies each signature, records arrival per webhook-id (first arrival only). */
async function startReceiver() {
  const verifier = new Webhook(SECRET);
  const arrivals = new Map<string, number>();
  let badSignatures = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = req.headers['webhook-id'] as string | undefined;
      if (id) {
        try {
          verifier.verify(body, req.headers as Record<string, string>);
        } catch {
          badSignatures++;
        }
      }
      const key = id ?? `raw-${randomUUID()}`;
      if (!arrivals.has(key)) arrivals.set(key, performance.now());
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrivals, bad: () => badSignatures, close: () => server.close() };
}

/** A user and its account, straight in SQL: the bench measures the engine, not registration. */
async function createBenchAccount(db: Db): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `WITH u AS (INSERT INTO users (email, password_hash, name) VALUES ($1, 'x', 'bench') RETURNING id)
     INSERT INTO accounts (owner_user_id, name, balance) SELECT id, 'bench', 0 FROM u RETURNING id`,
    [`bench-${randomUUID()}@example.com`],
  );
  return rows[0]!.id;
}

async function setupAccount(db: Db, url: string): Promise<string> {
  const secrets = createSecretBox(Buffer.alloc(32, 9));
  const accountId = await createBenchAccount(db);
  await db.query(`INSERT INTO webhooks (account_id, name, direction, url, secret_sealed, events) VALUES ($1, 'bench', 'outgoing', $2, $3, $4)`, [
    accountId, url, secrets.seal(SECRET), ['bench.event'],
  ]);
  return accountId;
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const database = await createBenchDatabase();
  const temporal = await startTemporalDevServer({ port: await findFreePort(), uiPort: await findFreePort(), onLine: () => {} });
  const db = createPool(database.url, 20);
  const config = loadConfig({
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: temporal.address,
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
    ALLOW_PRIVATE_TARGETS: 'true',
    RECONCILE_INTERVAL_MS: '1000',
  });
  const connection = await NativeConnection.connect({ address: temporal.address });
  const engine = await createEngine({ connection, config, db, workflowBundle: await bundleWorkflows(), log: () => {} });
  const running = engine.run();
  const receiver = await startReceiver();

  try {
    // Each section is printed as soon as it is measured.
    if (SCENARIOS.has('deliveries')) console.log((await benchDeliveries(db, engine.client, engine.handOff, connection, receiver)).join('\n'));
    if (SCENARIOS.has('cron')) console.log((await benchCron(db, engine.handOff)).join('\n'));
  } finally {
    engine.shutdown();
    await running.catch(() => {});
    await connection.close();
    receiver.close();
    await db.end();
    await temporal.stop();
    await database.drop();
  }
}

async function benchDeliveries(
  db: Db,
  client: Client,
  handOff: Awaited<ReturnType<typeof createEngine>>['handOff'],
  connection: NativeConnection,
  receiver: Awaited<ReturnType<typeof startReceiver>>,
): Promise<string[]> {
  // Our events are typed `bench.event` to one webhook subscribed to it; the event catalog is an API concern.
  const accountId = await setupAccount(db, receiver.url);
  const emit = async () => {
    const id = await withTransaction(db, async (tx) => {
      const event = await insertEvent(tx, { accountId, type: 'bench.event', data: { n: 1 } });
      await startEventDispatch(tx, event);
      return event.id;
    });
    handOff.kick();
    return id;
  };
  const waitAll = async (ids: string[], timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (ids.some((id) => !receiver.arrivals.has(id))) {
      if (Date.now() > deadline) throw new Error(`only ${ids.filter((id) => receiver.arrivals.has(id)).length}/${ids.length} deliveries arrived`);
      await sleep(20);
    }
  };

  // Warm-up (bundles loaded, connections open).
  await waitAll(await Promise.all(Array.from({ length: 20 }, emit)), 60_000);

  // Burst: throughput.
  const burstStart = performance.now();
  const burstIds: string[] = [];
  for (let i = 0; i < EVENTS; i += 25) burstIds.push(...(await Promise.all(Array.from({ length: Math.min(25, EVENTS - i) }, emit))));
  await waitAll(burstIds, 300_000);
  const burstSeconds = (Math.max(...burstIds.map((id) => receiver.arrivals.get(id)!)) - burstStart) / 1000;
  const ours = EVENTS / burstSeconds;

  // Paced: latency from emit to receipt.
  const latencies: number[] = [];
  const pacedCount = Math.min(EVENTS, RATE * 10);
  const pending: Promise<void>[] = [];
  for (let i = 0; i < pacedCount; i++) {
    const t0 = performance.now();
    pending.push(
      emit().then(async (id) => {
        await waitAll([id], 60_000);
        latencies.push(receiver.arrivals.get(id)! - t0);
      }),
    );
    await sleep(1000 / RATE);
  }
  await Promise.all(pending);

  // Raw Temporal: one workflow + one activity POSTing the same kind of body, same server, same receiver.
  const rawWorker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: 'bench-raw',
    workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('./raw-workflows'), logger: new DefaultLogger('WARN') }),
    activities: {
      async rawPost(url: string, body: string) {
        const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
        return res.status;
      },
    },
  });
  const rawRun = rawWorker.run();
  const body = JSON.stringify({ id: randomUUID(), type: 'bench.event', data: { n: 1 } });
  await Promise.all(Array.from({ length: 20 }, () => client.workflow.execute('rawDeliveryWorkflow', { taskQueue: 'bench-raw', workflowId: `raw-${randomUUID()}`, args: [receiver.url, body] })));
  const rawStart = performance.now();
  const handles = [];
  for (let i = 0; i < EVENTS; i += 25) {
    handles.push(...(await Promise.all(Array.from({ length: Math.min(25, EVENTS - i) }, () =>
      client.workflow.start('rawDeliveryWorkflow', { taskQueue: 'bench-raw', workflowId: `raw-${randomUUID()}`, args: [receiver.url, body] })))));
  }
  await Promise.all(handles.map((h) => h.result()));
  const raw = EVENTS / ((performance.now() - rawStart) / 1000);
  rawWorker.shutdown();
  await rawRun;

  return [
    `(a) event → signed delivery received (${EVENTS} events burst; ${pacedCount} paced at ${RATE}/s)`,
    `    ours: ${ours.toFixed(1)} deliveries/s   latency p50 ${percentile(latencies, 50).toFixed(0)} ms  p99 ${percentile(latencies, 99).toFixed(0)} ms`,
    `    raw Temporal workflow+activity (POST only): ${raw.toFixed(1)} /s   ratio ours/raw ${(ours / raw).toFixed(2)}`,
    `    bad signatures: ${receiver.bad()}`,
  ];
}

async function benchCron(db: Db, handOff: Awaited<ReturnType<typeof createEngine>>['handOff']): Promise<string[]> {
  const accountId = await createBenchAccount(db);
  const syncStart = performance.now();
  // The database trigger on `triggers` queues each schedule's sync in the insert's transaction.
  await db.query(
    `INSERT INTO triggers (account_id, scope, type, name, config_json)
     SELECT $1, 'user', 'cron', 'bench ' || g, '{"cronExpression":"* * * * *","timezone":"UTC","overlapPolicy":"skip","catchupWindow":"1h"}'
     FROM generate_series(1, $2) g`,
    [accountId, TRIGGERS],
  );
  while ((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE kind = 'schedule'`)).rows[0]!.n > 0) {
    await handOff.drain();
    await sleep(200);
  }
  const syncSeconds = (performance.now() - syncStart) / 1000;

  // Observe whole minutes, starting at the next minute boundary.
  const now = Date.now();
  const firstMinute = Math.ceil(now / 60_000) * 60_000;
  const end = firstMinute + MINUTES * 60_000;
  await sleep(end - now + 20_000); // the last minute's fires, and time to record them
  const fires = await db.query<{ minute: Date; n: number; lags: number[] }>(
    `SELECT date_trunc('minute', scheduled_at) AS minute, count(*)::int AS n,
            array_agg(extract(epoch FROM (f.created_at - f.scheduled_at)) * 1000) AS lags
     FROM fires f JOIN triggers t ON t.id = f.trigger_id
     WHERE t.account_id = $1 AND f.scheduled_at >= $2 AND f.scheduled_at < $3
     GROUP BY 1 ORDER BY 1`,
    [accountId, new Date(firstMinute), new Date(end)],
  );
  const lags = fires.rows.flatMap((r) => r.lags.map(Number));
  const counted = await db.query<{ n: number }>(`SELECT sum(fire_count)::int AS n FROM triggers WHERE account_id = $1`, [accountId]);
  const fireRows = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fires f JOIN triggers t ON t.id = f.trigger_id WHERE t.account_id = $1`, [accountId]);
  return [
    `(b) ${TRIGGERS} cron triggers "* * * * *" (schedules synced in ${syncSeconds.toFixed(1)} s), ${MINUTES} whole minutes observed`,
    ...fires.rows.map((r) => `    ${r.minute.toISOString()}: ${r.n} fires`),
    `    lag scheduled → fireCount updated: p50 ${percentile(lags, 50).toFixed(0)} ms  p99 ${percentile(lags, 99).toFixed(0)} ms  max ${Math.max(...lags).toFixed(0)} ms`,
    `    fireCount total ${counted.rows[0]!.n} = fire rows ${fireRows.rows[0]!.n}`,
  ];
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
