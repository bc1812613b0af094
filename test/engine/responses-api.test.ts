import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import { registerUser, type TestUser } from '../helpers/app';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { startModelServer, textReply, toolCallsReply, type ModelServer } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { openSse, type SseStream } from '../helpers/sse';

/**
 * MODEL_API=responses: runs speak OpenAI's Responses API (POST /v1/responses; tools, tool results, usage,
 * streaming) to a scripted provider on loopback, with the same steps, usage and deltas as Chat Completions.
 */
describe('MODEL_API=responses', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let models: ModelServer;
  let tools: Receiver;
  let user: TestUser;
  let base: string;
  const open: SseStream[] = [];

  before(async () => {
    models = await startModelServer(suite);
    tools = await startReceiver(suite, () => ({ body: { temperature: 21 } }));
    h = await startEngine(suite, __filename, {
      MODEL_API: 'responses',
      MODEL_BASE_URL: models.baseUrl,
      MODEL_API_KEY: 'sk-responses-0123456789abcdef',
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
    const res = await h.app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: model, systemPrompt: 'Be brief.', configJson: { model } } });
    assert.equal(res.statusCode, 201, res.body);
    const tool = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${res.json().id}/tools`,
      headers: user.auth,
      payload: { type: 'custom', name: 'thermometer', configJson: { endpoint: `${tools.url}/t`, method: 'POST' } },
    });
    assert.equal(tool.statusCode, 201, tool.body);
    return res.json().id;
  }

  async function startRun(agentId: string): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs`, headers: user.auth, payload: { input: 'how warm is it?' } });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().id;
  }

  it('runs model, tool, model over /responses: the same steps, usage and deltas, tool results sent back as function_call_output', async () => {
    models.script('resp-tools', (_call, n) =>
      n === 0
        ? toolCallsReply([{ name: 'thermometer', arguments: { room: 'hall' }, id: 'call_t1' }], { prompt_tokens: 30, completion_tokens: 8 })
        : { ...textReply('It is 21 degrees.', { prompt_tokens: 50, completion_tokens: 6 }), pieceDelayMs: 50 },
    );
    const runId = await startRun(await agentWith('resp-tools'));
    const stream = await openSse(`${base}/api/runs/${runId}/events`, user.auth);
    open.push(stream);
    await stream.ended;

    const kinds = stream.events().map((e) => (e.event === 'step' ? `step ${e.id}` : e.event));
    assert.deepEqual(kinds.filter((k) => k !== 'delta'), ['step 0', 'step 1', 'step 2', 'done']);
    assert.ok(kinds.indexOf('delta') > kinds.indexOf('step 1') && kinds.lastIndexOf('delta') < kinds.indexOf('step 2'), kinds.join(' '));
    const text = stream.events().filter((e) => e.event === 'delta').map((e) => JSON.parse(e.data).text).join('');
    assert.equal(text, 'It is 21 degrees.');

    const run = (await h.app.inject({ method: 'GET', url: `/api/runs/${runId}`, headers: user.auth })).json();
    assert.equal(run.status, 'succeeded', run.error);
    assert.equal(run.output.text, 'It is 21 degrees.');
    assert.deepEqual(run.output.usage, { promptTokens: 80, completionTokens: 14 });
    const steps = (await h.app.inject({ method: 'GET', url: `/api/runs/${runId}/steps`, headers: user.auth })).json();
    assert.deepEqual(steps.map((s: { type: string; name: string }) => [s.type, s.name]), [['model', 'resp-tools'], ['tool', 'thermometer'], ['model', 'resp-tools']]);
    assert.deepEqual(steps[0].output.toolCalls, [{ id: 'call_t1', name: 'thermometer', arguments: '{"room":"hall"}' }]);
    assert.deepEqual(steps[1].input.arguments, { room: 'hall' });
    assert.deepEqual(steps[0].usage, { promptTokens: 30, completionTokens: 8 });

    const calls = models.callsFor('resp-tools');
    assert.equal(calls.length, 2);
    for (const c of calls) assert.equal(c.body.stream, true);
    const first = calls[0]!.body as unknown as Record<string, unknown>;
    assert.equal(first.store, false);
    assert.deepEqual(first.tools, [{ type: 'function', name: 'thermometer', description: (first.tools as { description: string }[])[0]!.description, parameters: { type: 'object' }, strict: false }]);
    assert.deepEqual(first.input, [
      { type: 'message', role: 'system', content: 'Be brief.' },
      { type: 'message', role: 'user', content: 'how warm is it?' },
    ]);
    const second = calls[1]!.body.input!;
    assert.deepEqual(second.slice(2), [
      { type: 'function_call', call_id: 'call_t1', name: 'thermometer', arguments: '{"room":"hall"}' },
      { type: 'function_call_output', call_id: 'call_t1', output: '{"temperature":21}' },
    ]);
  });

  it('a provider that refuses streaming on /responses is called without it', async () => {
    models.script('resp-whole', () => textReply('whole'), { streaming: false });
    const runId = await startRun(await agentWith('resp-whole'));
    await waitFor('the run to end', async () => ['succeeded', 'failed'].includes((await h.app.inject({ method: 'GET', url: `/api/runs/${runId}`, headers: user.auth })).json().status), 30_000);
    const run = (await h.app.inject({ method: 'GET', url: `/api/runs/${runId}`, headers: user.auth })).json();
    assert.equal(run.status, 'succeeded', run.error);
    assert.equal(run.output.text, 'whole');
    assert.deepEqual(run.output.usage, { promptTokens: 10, completionTokens: 5 });
    assert.deepEqual(models.callsFor('resp-whole').map((c) => c.body.stream ?? false), [true, false]);
  });
});
