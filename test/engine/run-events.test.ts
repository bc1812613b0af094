import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type AddressInfo, type Socket } from 'node:net';
import { before, describe, it } from 'node:test';
import { registerUser, type TestUser } from '../helpers/app';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { errorReply, startModelServer, textReply, toolCallsReply, type ModelServer } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { openSse, type SseEvent, type SseStream } from '../helpers/sse';

const KEY = 'sk-events-0123456789abcdef-SSE';
/** The steps and the end: the model's text in `delta`s before its step is run-deltas.test.ts's. */
const notDelta = (e: SseEvent) => e.event !== 'delta';
const HEARTBEAT_MS = 300;

/** GET /api/runs/:id/events: live run events over a real socket (Server-Sent Events). */
describe('run events (SSE)', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let models: ModelServer;
  let tools: Receiver;
  let user: TestUser;
  let base: string;
  const open: SseStream[] = [];

  before(async () => {
    models = await startModelServer(suite);
    tools = await startReceiver(suite, () => ({ body: { ok: true } }));
    h = await startEngine(suite, __filename, {
      MODEL_BASE_URL: models.baseUrl,
      MODEL_API_KEY: KEY,
      MODEL_MAX_RETRIES: '0',
      RUN_EVENTS_HEARTBEAT_MS: String(HEARTBEAT_MS),
      INITIAL_BALANCE: '100000',
      // One user holds the 30 streams of the connection test below.
      RUN_STREAMS_PER_USER: '30',
      // The stalled-client test's run sends the model its 20 tool results (~4.7 MiB) to get its second batch.
      MODEL_CONTEXT_MAX_BYTES: String(16 * 1024 * 1024),
    });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    // Registered last, so undone first: the streams close before the app does.
    onCleanup(suite, () => open.forEach((s) => s.close()));
    user = await registerUser(h.app);
  });

  /** An agent thinking with `model`, with one custom tool `probe` (at `toolsUrl`). */
  async function agentWith(model: string, toolsUrl = tools.url): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: model, configJson: { model } } });
    assert.equal(res.statusCode, 201, res.body);
    const tool = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${res.json().id}/tools`,
      headers: user.auth,
      payload: { type: 'custom', name: 'probe', configJson: { endpoint: `${toolsUrl}/probe`, method: 'POST' } },
    });
    assert.equal(tool.statusCode, 201, tool.body);
    return res.json().id;
  }

  async function startRun(agentId: string): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs`, headers: user.auth, payload: { input: 'go' } });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().id;
  }

  async function events(runId: string, headers: Record<string, string> = {}): Promise<SseStream> {
    const stream = await openSse(`${base}/api/runs/${runId}/events`, { ...user.auth, ...headers });
    open.push(stream);
    return stream;
  }

  /** model (asks for probe), tool, model (answers after `lastDelayMs`). */
  const threeSteps = (model: string, lastDelayMs = 0) =>
    models.script(model, (_call, n) => (n === 0 ? toolCallsReply([{ name: 'probe', arguments: {} }]) : { ...textReply('all done'), delayMs: lastDelayMs }));

  it('streams each step as it finishes, in order, then done with the run, and ends', async () => {
    threeSteps('sse-order', 600);
    const runId = await startRun(await agentWith('sse-order'));
    const stream = await events(runId);
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type')!, /^text\/event-stream/);
    assert.equal(stream.headers.get('api-version'), '1');
    assert.equal(stream.headers.get('x-content-type-options'), 'nosniff', 'the security headers are sent');
    await stream.ended;

    const received = stream.events().filter(notDelta);
    assert.deepEqual(received.map((e) => [e.event, e.id]), [['step', '0'], ['step', '1'], ['step', '2'], ['done', undefined]]);
    const steps = (await h.app.inject({ method: 'GET', url: `/api/runs/${runId}/steps`, headers: user.auth })).json();
    assert.deepEqual(received.slice(0, 3).map((e) => JSON.parse(e.data)), steps, 'each step as GET /steps shows it');
    const done = JSON.parse(received[3]!.data);
    assert.equal(done.id, runId);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.output.text, 'all done');
    assert.ok(stream.received.some((e) => e.event === 'comment' && e.data === 'heartbeat'), 'a heartbeat while the last model call took 600 ms');
    assert.ok(received[1]!.receivedAt <= Date.parse(done.finishedAt) - 400, 'the tool step arrived as it finished, not with the end');
  });

  it('resumes after Last-Event-ID, mid-run and after the end, without repeating a step', async () => {
    threeSteps('sse-resume', 1_500);
    const runId = await startRun(await agentWith('sse-resume'));
    const first = await events(runId);
    const [step0] = await first.waitForEvents(1);
    assert.equal(step0!.id, '0');
    first.close();

    const resumed = await events(runId, { 'last-event-id': step0!.id! });
    await resumed.ended;
    assert.deepEqual(resumed.events().filter(notDelta).map((e) => [e.event, e.id]), [['step', '1'], ['step', '2'], ['done', undefined]]);

    const late = await events(runId, { 'last-event-id': '1' });
    await late.ended;
    assert.deepEqual(late.events().filter(notDelta).map((e) => [e.event, e.id]), [['step', '2'], ['done', undefined]], 'an ended run answers at once');
    const all = await events(runId);
    await all.ended;
    assert.deepEqual(all.events().filter(notDelta).map((e) => e.id ?? e.event), ['0', '1', '2', 'done']);
  });

  it('holds no database connection per open stream: one LISTEN connection serves them all', async () => {
    // Each run's model call takes 4 s: the streams are counted while they wait.
    models.script('sse-many', () => ({ ...textReply('finally'), delayMs: 4_000 }));
    const agentId = await agentWith('sse-many');
    const runIds = await Promise.all(Array.from({ length: 3 }, () => startRun(agentId)));
    // 30 streams on a pool of 20: a stream holding a connection would starve the rest (and the API).
    const streams = await Promise.all(Array.from({ length: 30 }, (_, i) => events(runIds[i % 3]!)));
    await waitFor('streams to be set up', async () => streams.every((s) => s.received.length > 0), 10_000);
    const { rows } = await h.db.query<{ listens: number; total: number }>(
      `SELECT count(*) FILTER (WHERE query ILIKE 'LISTEN%')::int AS listens, count(*)::int AS total
         FROM pg_stat_activity WHERE datname = current_database()`,
    );
    assert.equal(rows[0]!.listens, 1, 'one LISTEN connection');
    assert.ok(rows[0]!.total < 30, `${rows[0]!.total} connections for 30 streams`);
    const res = await h.app.inject({ method: 'GET', url: `/api/runs/${runIds[0]}`, headers: user.auth });
    assert.equal(res.statusCode, 200, 'the API still answers');
    await Promise.all(streams.map((s) => s.ended));
    for (const s of streams) assert.deepEqual(s.events().filter(notDelta).map((e) => e.event), ['step', 'done']);
  });

  it('disconnects a client that stops reading once its unsent data passes 1 MiB: the API holds no more of it', async () => {
    // Two model answers of 20 tool calls each, every call answering 240 KiB: ~9.4 MiB of steps, far more
    // than the kernel's socket buffers on loopback (~4 MiB) take in.
    const blob = 'x'.repeat(240 * 1024);
    const big = await startReceiver(suite, () => ({ body: { blob } }));
    const calls = Array.from({ length: 20 }, (_, i) => ({ name: 'probe', arguments: { i } }));
    models.script('sse-stalled', (_call, n) => (n < 2 ? toolCallsReply(calls) : textReply('read it all')));
    const runId = await startRun(await agentWith('sse-stalled', big.url));

    const serverSockets: Socket[] = [];
    const onConnection = (socket: Socket) => serverSockets.push(socket);
    h.app.server.on('connection', onConnection);
    // A client that sends its request and never reads a byte of the answer.
    const client = net.connect((h.app.server.address() as AddressInfo).port, '127.0.0.1');
    // The API destroys its side with data unsent, so the end may come as a reset (ECONNRESET, which Node 24
    // reports even on a paused socket) rather than a FIN: either is the end of the connection.
    let reset: NodeJS.ErrnoException | undefined;
    client.on('error', (err: NodeJS.ErrnoException) => (reset = err));
    await once(client, 'connect');
    client.pause();
    client.write(`GET /api/runs/${runId}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${user.auth.authorization}\r\nAccept: text/event-stream\r\n\r\n`);
    const server = await waitFor('the server side of the connection', async () => serverSockets.find((s) => s.remotePort === client.localPort), 5_000);
    h.app.server.off('connection', onConnection);

    let maxUnsent = 0;
    let maxHeap = 0;
    const heapBefore = process.memoryUsage().heapUsed;
    const sampler = setInterval(() => {
      maxUnsent = Math.max(maxUnsent, server.writableLength);
      maxHeap = Math.max(maxHeap, process.memoryUsage().heapUsed);
    }, 20);
    try {
      await waitFor('the run to end', async () => {
        const res = await h.app.inject({ method: 'GET', url: `/api/runs/${runId}`, headers: user.auth });
        return ['succeeded', 'failed'].includes(res.json().status);
      }, 120_000);
      await waitFor('the API to drop the connection', async () => server.destroyed, 10_000).catch(() => {});
    } finally {
      clearInterval(sampler);
    }
    const { rows } = await h.db.query<{ bytes: number; steps: number }>(
      `SELECT sum(octet_length(output::text))::int AS bytes, count(*)::int AS steps FROM run_steps WHERE run_id = $1`,
      [runId],
    );
    const MiB = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MiB`;
    console.log(
      `a client that never reads: the run made ${rows[0]!.steps} steps, ${MiB(rows[0]!.bytes)} of output; the API held at most ` +
        `${MiB(maxUnsent)} unsent for it; disconnected: ${server.destroyed}; heap ${MiB(heapBefore)} before, at most ${MiB(maxHeap)} meanwhile`,
    );
    assert.ok(rows[0]!.bytes > 8 * 1024 * 1024, 'well over 1 MiB of step data');
    assert.ok(maxUnsent <= 1024 * 1024 + 300 * 1024, `at most 1 MiB and one event unsent (${maxUnsent} bytes)`);
    assert.ok(server.destroyed, 'the API dropped the connection');

    // What the client finds when it reads at last: the start of the stream, then the end of the connection, no `done`.
    let received = '';
    client.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    client.resume();
    // (Not events.once: it rejects on the reset's 'error'.)
    await Promise.race([new Promise((r) => client.once('close', r)), new Promise((r) => setTimeout(r, 10_000))]);
    assert.ok(client.destroyed, 'the connection is gone');
    assert.ok(!reset || reset.code === 'ECONNRESET', `the connection ended by a reset or a close, not ${reset?.code}`);
    assert.ok(received.length < rows[0]!.bytes, `${received.length} bytes received of ${rows[0]!.bytes}`);
    assert.doesNotMatch(received, /event: done/);
  });

  it('answers 404 for another account\'s run, 400 for a malformed Last-Event-ID, 401 without a credential, and never shows the key', async () => {
    models.script('sse-401', () => errorReply(401, `Incorrect API key provided: ${KEY}`));
    const runId = await startRun(await agentWith('sse-401'));
    const stranger = await registerUser(h.app);
    const other = await fetch(`${base}/api/runs/${runId}/events`, { headers: stranger.auth });
    assert.equal(other.status, 404);
    assert.deepEqual(await other.json(), { message: 'Run not found' });
    const malformed = await fetch(`${base}/api/runs/${runId}/events`, { headers: { ...user.auth, 'last-event-id': 'abc' } });
    assert.equal(malformed.status, 400);
    assert.match(((await malformed.json()) as { message: string }).message, /last-event-id/);
    assert.equal((await fetch(`${base}/api/runs/${runId}/events`)).status, 401);

    const stream = await events(runId);
    await stream.ended;
    const done = JSON.parse(stream.events().at(-1)!.data);
    assert.equal(done.status, 'failed');
    assert.match(done.error, /Incorrect API key provided: \[redacted\]/);
    assert.equal(JSON.stringify(stream.received).includes(KEY.slice(-6)), false);
  });
});
