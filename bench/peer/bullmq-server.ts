/**
 * `bench:peer`'s BullMQ peer (bench/peer/bullmq.ts starts it): what a Node team would build for the same job
 * in an afternoon — Fastify + BullMQ on Redis. One process, as such a service is usually run:
 * - `POST /hooks/:id`: the hook's JSON body (parsed and re-serialised, as Fastify does) is queued as one job
 *   (`queue.add`, the job's id a fresh `msg_<uuid>`), and 202 `{ id }` is answered once Redis has it (its
 *   append-only file written within a second: `--appendfsync everysec`); 404 for an unknown hook;
 * - a BullMQ Worker (BULLMQ_CONCURRENCY jobs at a time, the per-endpoint limit ours has:
 *   DELIVERY_CONCURRENCY_PER_WEBHOOK 10) POSTs each job as ours' envelope `{ id, type, timestamp, data }`,
 *   signed as Standard Webhooks (the `standardwebhooks` package, as ours; `webhook-id` the job's id, the same on every
 *   attempt) to the hook's target within 15 s; anything but a 2xx fails the attempt, and BullMQ retries it
 *   (`attempts` 8 with an exponential backoff from 5 s: ours' schedule has 8 attempts, the second after 5 s).
 *   Completed and failed jobs are kept, the last 10,000 of each (ours keeps every delivery).
 * A job a killed process held is taken up again by BullMQ's stalled-job check once its lock expires
 * (BullMQ's defaults: 30 s), with the same id.
 * Environment: PORT, REDIS_PORT, HOOK_ID, TARGET_URL, TARGET_SECRET (`whsec_…`), BULLMQ_CONCURRENCY (10).
 * Prints `[bullmq-peer] listening` once it serves.
 */
import { randomUUID } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';

const env = (name: string) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};
const PORT = Number(env('PORT'));
const REDIS_PORT = Number(env('REDIS_PORT'));
const CONCURRENCY = Number(process.env.BULLMQ_CONCURRENCY || 10);
/** The one incoming hook and where its calls go (a real service would read these from its database). */
const hooks = new Map([[env('HOOK_ID'), { url: env('TARGET_URL'), signer: new Webhook(env('TARGET_SECRET')) }]]);

interface Delivery {
  hookId: string;
  timestamp: string;
  payload: unknown;
}

const QUEUE = 'deliveries';
const connection = (blocking: boolean) => new Redis({ host: '127.0.0.1', port: REDIS_PORT, ...(blocking ? { maxRetriesPerRequest: null } : {}) });
const queue = new Queue<Delivery>(QUEUE, {
  connection: connection(false),
  defaultJobOptions: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 5_000 },
    removeOnComplete: { count: 10_000 },
    removeOnFail: { count: 10_000 },
  },
});

async function deliver(job: Job<Delivery>): Promise<void> {
  const hook = hooks.get(job.data.hookId);
  if (!hook) return; // deleted meanwhile: nothing to do
  const id = job.id!;
  const body = JSON.stringify({ id, type: 'webhook.received', timestamp: job.data.timestamp, data: { webhookId: job.data.hookId, payload: job.data.payload } });
  const now = new Date();
  const res = await fetch(hook.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': hook.signer.sign(id, now, body),
    },
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(15_000),
  });
  await res.arrayBuffer();
  if (res.status < 200 || res.status >= 300) throw new Error(`HTTP ${res.status}`);
}

async function main(): Promise<void> {
  const worker = new Worker<Delivery>(QUEUE, deliver, { connection: connection(true), concurrency: CONCURRENCY });
  worker.on('error', (err) => console.error(`[bullmq-peer] worker: ${err.message}`));
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  app.post<{ Params: { id: string } }>('/hooks/:id', async (request, reply) => {
    if (!hooks.has(request.params.id)) return reply.code(404).send({ message: 'Webhook not found' });
    const job = await queue.add('deliver', { hookId: request.params.id, timestamp: new Date().toISOString(), payload: request.body ?? null }, { jobId: `msg_${randomUUID()}` });
    return reply.code(202).send({ id: job.id });
  });
  await app.listen({ port: PORT, host: '127.0.0.1' });
  console.log('[bullmq-peer] listening');
  const stop = async () => {
    await app.close();
    await worker.close();
    await queue.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
