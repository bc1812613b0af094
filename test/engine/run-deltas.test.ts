import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import { registerUser, type TestUser } from '../helpers/app';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { startModelServer, textReply, toolCallsReply, type ModelServer } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { openSse, type SseEvent, type SseStream } from '../helpers/sse';

/**
 * Streaming (docs/api.md § Live run streams): model calls stream, `delta` events on GET /api/runs/:id/events
 * carry the text as it arrives, through Postgres notifications (no table written per token), and the step
 * is stored whole at its end. The scripted provider streams as the Chat Completions protocol does.
 */
describe('run deltas (streamed model text)', () => {
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
      MODEL_API_KEY: 'sk-deltas-0123456789abcdef',
      MODEL_MAX_RETRIES: '0',
      RUN_EVENTS_HEARTBEAT_MS: '300',
      INITIAL_BALANCE: '100000',
    });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    onCleanup(suite, () => open.forEach((s) => s.close()));
    user = await registerUser(h.app);
  });

  async function agentWith(model: string): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: model, configJson: { model } } });
    assert.equal(res.statusCode, 201, res.body);
    const tool = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${res.json().id}/tools`,
      headers: user.auth,
      payload: { type: 'custom', name: 'probe', configJson: { endpoint: `${tools.url}/probe`, method: 'POST' } },
    });
    assert.equal(tool.statusCode, 201, tool.body);
    return res.json().id;
  }

  async function startRun(agentId: string): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs`, headers: user.auth, payload: { input: 'go' } });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().id;
  }

  async function events(runId: string): Promise<SseStream> {
    const stream = await openSse(`${base}/api/runs/${runId}/events`, user.auth);
    open.push(stream);
    return stream;
  }

  const deltasOf = (events: SseEvent[]) => events.filter((e) => e.event === 'delta').map((e) => JSON.parse(e.data) as { stepIndex: number; offset: number; text: string });

  /** Each delta starts where the one before it ended: no piece torn out, none repeated. */
  function assertUnbroken(deltas: { offset: number; text: string }[]) {
    for (let i = 1; i < deltas.length; i++) assert.equal(deltas[i]!.offset, deltas[i - 1]!.offset + deltas[i - 1]!.text.length, `delta ${i} continues delta ${i - 1}`);
  }

  it('sends the text in deltas, in order, before the step, which is stored whole with its usage', async () => {
    const pieces = ['Once ', 'upon ', 'a ', 'time, ', 'in ', 'a ', 'stream ', '— ', 'fin ✓'];
    models.script('delta-order', () => ({ ...textReply(pieces.join(''), { prompt_tokens: 12, completion_tokens: 9 }), pieces, pieceDelayMs: 60 }));
    const runId = await startRun(await agentWith('delta-order'));
    const stream = await events(runId);
    await stream.ended;

    const received = stream.events();
    const kinds = received.map((e) => e.event);
    const stepAt = kinds.indexOf('step');
    assert.deepEqual(kinds.slice(stepAt), ['step', 'done']);
    assert.ok(kinds.slice(0, stepAt).every((k) => k === 'delta') && stepAt >= 2, `deltas before the step: ${kinds.join(' ')}`);
    const deltas = deltasOf(received);
    assert.ok(deltas.every((d) => d.stepIndex === 0));
    assert.equal(deltas[0]!.offset, 0, 'a stream open from the start gets the text from its start');
    assertUnbroken(deltas);
    const step = JSON.parse(received[stepAt]!.data);
    assert.equal(deltas.map((d) => d.text).join(''), pieces.join(''));
    assert.deepEqual(step.output.content, pieces.join(''), 'the step is stored whole');
    assert.deepEqual(step.usage, { promptTokens: 12, completionTokens: 9 }, 'usage from the stream\'s last chunk');
    assert.ok(received[0]!.receivedAt < Date.parse(step.finishedAt) - 200, 'the first text arrived while the step was still running');

    const [call] = models.callsFor('delta-order');
    assert.equal(call!.body.stream, true, 'the model call streams');
    assert.deepEqual(call!.body.stream_options, { include_usage: true });
    const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM run_steps WHERE run_id = $1`, [runId]);
    assert.equal(rows[0].n, 1, 'no row per delta');
  });

  it('a stream opened mid-step gets the stored steps, then only the deltas after it joined, then the step', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const pieces = ['alpha ', 'beta ', 'gamma ', 'delta'];
    models.script('delta-join', (_call, n) =>
      n === 0 ? toolCallsReply([{ name: 'probe', arguments: {} }]) : { ...textReply(pieces.join('')), pieces, holdBefore: { piece: 2, until: gate } },
    );
    const runId = await startRun(await agentWith('delta-join'));
    const first = await events(runId);
    await waitFor('two deltas of the last step', async () => deltasOf(first.events()).length >= 2, 30_000);

    const joiner = await events(runId);
    await joiner.waitForEvents(2); // the two stored steps
    release();
    await Promise.all([first.ended, joiner.ended]);

    const kinds = joiner.events().map((e) => (e.event === 'step' ? `step ${e.id}` : e.event));
    assert.deepEqual(kinds, ['step 0', 'step 1', 'delta', 'delta', 'step 2', 'done']);
    const late = deltasOf(joiner.events());
    assert.deepEqual(late.map((d) => [d.stepIndex, d.offset, d.text]), [[2, 11, 'gamma '], [2, 17, 'delta']], 'only what came after it joined, none torn or repeated');
    const all = deltasOf(first.events());
    assert.equal(all[0]!.offset, 0);
    assertUnbroken(all);
    assert.equal(all.map((d) => d.text).join(''), pieces.join(''));
    assert.equal(JSON.parse(joiner.events().at(-1)!.data).output.text, pieces.join(''));
  });

  it('calls a provider that refuses streaming without it, and remembers', async () => {
    models.script('delta-none', () => textReply('whole at once'), { streaming: false });
    const agentId = await agentWith('delta-none');
    const runId = await startRun(agentId);
    const stream = await events(runId);
    await stream.ended;
    assert.deepEqual(stream.events().map((e) => e.event), ['step', 'done'], 'no deltas: the text comes with its step');
    const done = JSON.parse(stream.events().at(-1)!.data);
    assert.equal(done.status, 'succeeded', done.error);
    assert.equal(done.output.text, 'whole at once');
    assert.deepEqual(models.callsFor('delta-none').map((c) => c.body.stream ?? false), [true, false], 'refused streamed, then asked without');

    const again = await startRun(agentId);
    await waitFor('the second run to end', async () => (await h.app.inject({ method: 'GET', url: `/api/runs/${again}`, headers: user.auth })).json().status === 'succeeded', 30_000);
    assert.deepEqual(models.callsFor('delta-none').map((c) => c.body.stream ?? false), [true, false, false], 'the next call goes unstreamed at once');
  });
});
