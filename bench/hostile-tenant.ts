/**
 * `npm run bench:hostile`: a victim account's writes, reads and stream opens, alone and while a hostile account
 * does at once what the second hardening pass bounded (docs/benchmarks.md says how to read its figures):
 * - one delivery's attempts: `POST …/deliveries/:id/retry` (over its per-minute limit), `GET …/deliveries/:id`
 *   and `GET …/deliveries/:id/attempts`, BENCH_ATTACK_DELIVERY_LOOPS loops of each, BENCH_ATTACK_RATE requests a
 *   second per loop (0: without pause);
 * - streams: as many `GET /api/runs/:id/events` held open as it can get, BENCH_ATTACK_STREAMS at most (a refused
 *   one is asked again after its Retry-After, 1 s when it names none);
 * - cancels: BENCH_ATTACK_CANCELS loops of `POST /api/runs/:id/cancel`, each with its own Idempotency-Key, on runs
 *   it queued, BENCH_ATTACK_RATE a second per loop; with BENCH_TEMPORAL_STALL=1 the Temporal dev server is stopped (SIGSTOP) for the attack, so that
 *   every call to Temporal waits for its deadline, as when Temporal does not answer.
 * The real API and worker processes (bench/kit/stack.ts) on a fresh database and dev server; all through the API.
 * The victim runs BENCH_VICTIM_LOOPS loops, each a write (`PATCH /api/agents/:id`), a read (`GET /api/agents/:id`)
 * and a stream open (`GET /api/runs/:id/events` until its headers), for BENCH_SECONDS alone and then under attack.
 * Prints the victim's operations per second of each kind in both windows, the ratio (target ≥ 0.9), its refusals,
 * and how the attacker was answered. Settings: BENCH_SECONDS [20], BENCH_VICTIM_LOOPS [4],
 * BENCH_ATTACK_DELIVERY_LOOPS [8], BENCH_ATTACK_RATE [5], BENCH_ATTACK_STREAMS [300], BENCH_ATTACK_CANCELS [10],
 * BENCH_TEMPORAL_STALL [1].
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient } from './kit/api-client';
import { startReceiver } from './kit/receiver';
import { setting } from './kit/settings';
import { Cleanups, createBenchDatabase, startApiAndWorker, startDevServer } from './kit/stack';

const SECONDS = Math.max(1, setting('BENCH_SECONDS', 20));
const VICTIM_LOOPS = Math.max(1, setting('BENCH_VICTIM_LOOPS', 4));
const DELIVERY_LOOPS = setting('BENCH_ATTACK_DELIVERY_LOOPS', 8);
const ATTACK_STREAMS = setting('BENCH_ATTACK_STREAMS', 300);
const ATTACK_CANCELS = setting('BENCH_ATTACK_CANCELS', 10);
const ATTACK_RATE = setting('BENCH_ATTACK_RATE', 5);
const TEMPORAL_STALL = setting('BENCH_TEMPORAL_STALL', 1) === 1;
const WARMUP_SECONDS = 3;
const ATTACK_LEAD_MS = 2_000;
const RATIO_TARGET = 0.9;
const QUEUED_RUNS = 20;

type Kind = 'write' | 'read' | 'stream';
const KINDS: Kind[] = ['write', 'read', 'stream'];

/** Answers by status (or error), for the printout. */
class Tally {
  readonly counts: Record<string, number> = {};
  add(key: string | number) {
    this.counts[key] = (this.counts[key] ?? 0) + 1;
  }
  toString() {
    return Object.entries(this.counts).map(([k, n]) => `${k}: ${n}`).join(', ') || 'none';
  }
}

async function status(base: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Opens a run's event stream; answers its status once the headers are in (the body is left unread until `hold`
 * ends), and the seconds its Retry-After asks for.
 */
async function openStream(base: string, token: string, runId: string, hold: Promise<unknown> | null): Promise<{ status: number; retryAfter: number }> {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/runs/${runId}/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: controller.signal });
  if (res.status === 200 && hold) await Promise.race([hold, res.arrayBuffer().catch(() => undefined)]);
  controller.abort();
  await res.arrayBuffer().catch(() => undefined);
  return { status: res.status, retryAfter: Number(res.headers.get('retry-after')) || 1 };
}

/** The victim's loops for `seconds`: each does a write, a read and a stream open in turn; answers successes by kind. */
async function victimWindow(base: string, token: string, agentId: string, runId: string, seconds: number) {
  const ok: Record<Kind, number> = { write: 0, read: 0, stream: 0 };
  const refused = new Tally();
  const end = performance.now() + seconds * 1000;
  const once = async (kind: Kind, n: number) => {
    const answered =
      kind === 'write'
        ? await status(base, token, 'PATCH', `/api/agents/${agentId}`, { description: `edit ${n}` })
        : kind === 'read'
          ? await status(base, token, 'GET', `/api/agents/${agentId}`)
          : (await openStream(base, token, runId, null)).status;
    if (answered === 200) ok[kind]++;
    else refused.add(`${kind} ${answered}`);
  };
  await Promise.all(
    Array.from({ length: VICTIM_LOOPS }, async (_, loop) => {
      for (let n = 0; performance.now() < end; n++) {
        for (const kind of KINDS) await once(kind, loop * 1_000_000 + n).catch((err: Error) => refused.add(`${kind} ${err.message}`));
      }
    }),
  );
  const perSecond = Object.fromEntries(KINDS.map((k) => [k, ok[k] / seconds])) as Record<Kind, number>;
  return { perSecond, total: (ok.write + ok.read + ok.stream) / seconds, refused };
}

async function waitForRun(client: ApiClient, runId: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const run = await client.request<{ status: string }>('GET', `/api/runs/${runId}`);
    if (run.status === 'succeeded' || run.status === 'failed') return;
    await sleep(100);
  }
  throw new Error(`run ${runId} did not finish`);
}

async function main() {
  const cleanups = new Cleanups();
  try {
    const database = await createBenchDatabase();
    cleanups.push(database.drop);
    const temporal = await startDevServer();
    cleanups.push(temporal.stop);
    const failing = await startReceiver(() => ({ status: 500, body: 'always failing' }));
    cleanups.push(failing.close);
    const stack = await startApiAndWorker(database.url, temporal.address, { INITIAL_BALANCE: '1000000' });
    cleanups.push(stack.stop);
    const base = stack.base;

    const victim = new ApiClient(base);
    const victimToken = await victim.register('victim@bench.example');
    const victimAgent = await victim.request<{ id: string }>('POST', '/api/agents', { name: 'victim', status: 'active' });
    const victimRun = await victim.request<{ id: string }>('POST', `/api/agents/${victimAgent.id}/runs`, { input: 'hello' });
    await waitForRun(victim, victimRun.id);

    const attacker = new ApiClient(base);
    const attackerToken = await attacker.register('attacker@bench.example');
    const attackerAgent = await attacker.request<{ id: string }>('POST', '/api/agents', { name: 'attacker', status: 'active' });
    const attackerRun = await attacker.request<{ id: string }>('POST', `/api/agents/${attackerAgent.id}/runs`, { input: 'stream me' });
    const webhook = await attacker.request<{ id: string }>('POST', '/api/webhooks', { name: 'retried', url: `${failing.url}/hook`, events: ['webhook.test'] });
    await attacker.request('POST', `/api/webhooks/${webhook.id}/test`, undefined, [202]);
    let deliveryId = '';
    for (let i = 0; i < 300 && !deliveryId; i++) {
      deliveryId = (await attacker.request<Array<{ id: string }>>('GET', `/api/webhooks/${webhook.id}/deliveries`))[0]?.id ?? '';
      if (!deliveryId) await sleep(100);
    }
    if (!deliveryId) throw new Error('the test delivery never appeared');

    await victimWindow(base, victimToken, victimAgent.id, victimRun.id, WARMUP_SECONDS);
    const alone = await victimWindow(base, victimToken, victimAgent.id, victimRun.id, SECONDS);

    // The attack: everything at once, from ATTACK_LEAD_MS before the victim's second window to its end.
    const stop = new AbortController();
    const stopped = new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }));
    const answers = { retry: new Tally(), detail: new Tally(), attempts: new Tally(), stream: new Tally(), cancel: new Tally(), queue: new Tally() };
    /** `call` again and again until the attack stops, at most `rate` times a second (0: without pause). */
    const loop = (tally: Tally, call: () => Promise<number | string>, rate = 0) =>
      (async () => {
        while (!stop.signal.aborted) {
          const next = performance.now() + (rate > 0 ? 1000 / rate : 0);
          tally.add(await call().catch((err: Error) => `error ${err.message.slice(0, 60)}`));
          if (rate > 0) await sleep(Math.max(0, next - performance.now()));
        }
      })();
    const stalled = TEMPORAL_STALL && temporal.pid !== undefined;
    if (stalled) process.kill(temporal.pid!, 'SIGSTOP');
    const resume = () => stalled && process.kill(temporal.pid!, 'SIGCONT');
    cleanups.push(async () => void resume());
    // Runs to cancel: queued while Temporal is stopped (their starts wait in the outbox), or run at once otherwise.
    const queued: string[] = [attackerRun.id];
    const queueing = Promise.all(
      Array.from({ length: QUEUED_RUNS }, () =>
        attacker.request<{ id: string }>('POST', `/api/agents/${attackerAgent.id}/runs`, { input: 'cancel me' }, [202]).then(
          (run) => (queued.push(run.id), answers.queue.add(202)),
          (err: Error) => answers.queue.add(`error ${err.message.slice(0, 60)}`),
        ),
      ),
    );
    const attack: Array<Promise<unknown>> = [queueing];
    const deliveryPath = `/api/webhooks/${webhook.id}/deliveries/${deliveryId}`;
    for (let i = 0; i < DELIVERY_LOOPS; i++) {
      attack.push(loop(answers.retry, () => status(base, attackerToken, 'POST', `${deliveryPath}/retry`, undefined, { 'idempotency-key': randomUUID() }), ATTACK_RATE));
      attack.push(loop(answers.detail, () => status(base, attackerToken, 'GET', deliveryPath), ATTACK_RATE));
      attack.push(loop(answers.attempts, () => status(base, attackerToken, 'GET', `${deliveryPath}/attempts?limit=200`), ATTACK_RATE));
    }
    let streamsOpen = 0;
    let mostStreams = 0;
    for (let i = 0; i < ATTACK_STREAMS; i++) {
      attack.push(
        loop(answers.stream, async () => {
          const runId = queued[i % queued.length]!;
          streamsOpen++;
          mostStreams = Math.max(mostStreams, streamsOpen);
          try {
            const answered = await openStream(base, attackerToken, runId, stopped);
            if (answered.status !== 200) await Promise.race([stopped, sleep(answered.retryAfter * 1000)]);
            return answered.status;
          } finally {
            streamsOpen--;
          }
        }),
      );
    }
    for (let i = 0; i < ATTACK_CANCELS; i++) {
      attack.push(
        loop(answers.cancel, () =>
          status(base, attackerToken, 'POST', `/api/runs/${queued[Math.floor(Math.random() * queued.length)]}/cancel`, undefined, { 'idempotency-key': randomUUID() }),
          ATTACK_RATE,
        ),
      );
    }
    await sleep(ATTACK_LEAD_MS);
    const underAttack = await victimWindow(base, victimToken, victimAgent.id, victimRun.id, SECONDS);
    stop.abort();
    resume();
    await Promise.race([Promise.all(attack), sleep(15_000)]);

    const ratio = (k: Kind) => underAttack.perSecond[k] / alone.perSecond[k];
    const total = underAttack.total / alone.total;
    const verdict = (r: number) => (r >= RATIO_TARGET ? 'ok' : 'BELOW TARGET');
    const row = (label: string, w: typeof alone) =>
      `  ${label.padEnd(20)} ${KINDS.map((k) => w.perSecond[k].toFixed(1).padStart(8)).join(' ')} ${w.total.toFixed(1).padStart(8)}   refused: ${w.refused}`;
    console.log(
      [
        `hostile tenant: the victim's ${VICTIM_LOOPS} loops of write (PATCH /api/agents/:id), read (GET /api/agents/:id) and stream open ` +
          `(GET /api/runs/:id/events), ${SECONDS} s alone, then ${SECONDS} s under attack${stalled ? ' (Temporal stopped meanwhile)' : ''}; operations/s:`,
        `  ${''.padEnd(20)} ${KINDS.map((k) => k.padStart(8)).join(' ')} ${'all'.padStart(8)}`,
        row('victim alone', alone),
        row('victim under attack', underAttack),
        `  ratio under attack / alone: ${KINDS.map((k) => `${k} ${ratio(k).toFixed(2)}`).join(', ')}; all ${total.toFixed(2)} (${verdict(total)}; target ≥ ${RATIO_TARGET})`,
        `the attacker's answers (by status):`,
        `    retry          ${answers.retry} (${DELIVERY_LOOPS} loops of each, ${ATTACK_RATE || 'unpaced'}/s per loop; each retry its own Idempotency-Key)`,
        `    detail         ${answers.detail}`,
        `    attempts       ${answers.attempts}`,
        `    streams        ${answers.stream} (at most ${mostStreams} open at once, of ${ATTACK_STREAMS} asked for)`,
        `    cancels        ${answers.cancel} (${ATTACK_CANCELS} loops; ${queued.length} runs to cancel, queued: ${answers.queue})`,
        `    failing endpoint received ${failing.received()} attempts`,
      ].join('\n'),
    );
  } finally {
    await cleanups.run();
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(err.stack ?? err.message);
    process.exit(1);
  },
);
