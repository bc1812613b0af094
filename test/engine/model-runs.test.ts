import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { readAllPages, registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { fakeUsdPrice, startDataFixtures } from '../helpers/data-fixtures';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { errorReply, startModelServer, textReply, toolCallsReply, type ModelServer } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { createRunActivities } from '../../engine/runs';
import { workflowIds } from '../../engine/temporal/names';
import type { BegunRun } from '../../engine/contract';

const KEY = 'sk-test-0123456789abcdef-TOPSECRET';

/**
 * Runs with a language model, through the whole engine (API → run workflow → model and tool steps →
 * event) against a scripted OpenAI-compatible provider on loopback. Each test names its own model, so
 * the provider answers each with its own script.
 */
describe('model runs', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let models: ModelServer;
  let data: Awaited<ReturnType<typeof startDataFixtures>>;
  let service: Receiver;
  let user: TestUser;

  before(async () => {
    models = await startModelServer(suite);
    data = await startDataFixtures(suite);
    service = await startReceiver(suite, (req) => ({ body: { plan: 'gold', asked: JSON.parse(req.body || 'null') } }));
    h = await startEngine(suite, __filename, { ...data.env, MODEL_BASE_URL: models.baseUrl, MODEL_API_KEY: KEY, MODEL_MAX_RETRIES: '2', INITIAL_BALANCE: '100000' });
    user = await registerUser(h.app);
  });

  async function createAgent(body: Record<string, unknown>, u = user): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: '/api/agents', headers: u.auth, payload: { name: 'thinker', ...body } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  async function addTool(agentId: string, tool: Record<string, unknown>): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/tools`, headers: user.auth, payload: tool });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  async function run(agentId: string, payload: Record<string, unknown>) {
    const res = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs`, headers: user.auth, payload });
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().id as string;
    return waitFor(`run ${id} to finish`, async () => {
      const r = (await h.app.inject({ method: 'GET', url: `/api/runs/${id}`, headers: user.auth })).json();
      return (r.status === 'succeeded' || r.status === 'failed') && r;
    }, 30_000);
  }

  async function stepsOf(runId: string) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- steps are read as JSON, field by field
    return (await readAllPages(h.app, user, `/api/runs/${runId}/steps`)).items as unknown as Record<string, any>[];
  }

  it('composes the system message from the agent, sends the input as the user message and offers the enabled tools as functions', async () => {
    models.script('m-compose', () => textReply('BTC is at 7000.'));
    const agentId = await createAgent({
      systemPrompt: 'You are a trading assistant.\n',
      persona: 'Calm and precise',
      goal: 'Report prices',
      voice: 'terse',
      policies: ['Never give financial advice', { rule: 'cite sources' }],
      configJson: { model: 'm-compose', temperature: 0.2, unrelated: true },
    });
    const prices = await addTool(agentId, { type: 'coin_prices', name: 'Coin prices!', description: 'Spot prices', configJson: { coinIds: ['bitcoin'] } });
    const parameters = { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] };
    const lookup = await addTool(agentId, {
      type: 'custom',
      name: 'lookup customer',
      configJson: { endpoint: `${service.url}/lookup`, method: 'POST', bodyTemplate: '{{input}}', parameters },
    });
    await addTool(agentId, { type: 'custom', name: 'off', enabled: false, configJson: { endpoint: `${service.url}/off` } });

    const done = await run(agentId, { input: 'What is BTC?' });
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.executor, 'model');

    const [call, ...more] = models.callsFor('m-compose');
    assert.equal(more.length, 0, 'one model call');
    assert.equal(call!.headers.authorization, `Bearer ${KEY}`);
    assert.deepEqual(call!.body.messages, [
      {
        role: 'system',
        content:
          'You are a trading assistant.\n\n## Persona\nCalm and precise\n\n## Goal\nReport prices\n\n## Voice\nterse\n\n' +
          '## Policies\n- Never give financial advice\n- {"rule":"cite sources"}',
      },
      { role: 'user', content: 'What is BTC?' },
    ]);
    assert.equal(call!.body.temperature, 0.2);
    assert.equal(call!.body.tool_choice, undefined, 'the model may call tools');
    assert.deepEqual(call!.body.tools!.map((t) => t.function.name), ['Coin_prices', 'lookup_customer'], 'enabled tools only, names made valid');
    assert.equal(call!.body.tools![0]!.function.description, 'Spot prices');
    assert.deepEqual(Object.keys((call!.body.tools![0]!.function.parameters as { properties: object }).properties), ['coinIds']);
    assert.deepEqual(call!.body.tools![1]!.function.parameters, parameters);

    assert.deepEqual(done.output, {
      text: 'BTC is at 7000.',
      steps: [{ index: 0, type: 'model', name: 'm-compose', ok: true, durationMs: done.output.steps[0].durationMs }],
      usage: { promptTokens: 10, completionTokens: 5 },
    });
    const [step] = await stepsOf(done.id);
    assert.equal(step!.type, 'model');
    assert.deepEqual(step!.usage, { promptTokens: 10, completionTokens: 5 });
    assert.deepEqual(step!.output, { content: 'BTC is at 7000.', toolCalls: [], finishReason: 'stop' });
    assert.equal(step!.input.model, 'm-compose');
    assert.deepEqual(step!.input.messages, call!.body.messages, 'the first step shows what the model was sent');
    assert.deepEqual(step!.input.tools.map((t: { toolId: string }) => t.toolId), [prices, lookup]);

    const { rows } = await h.db.query(`SELECT data FROM events WHERE type = 'agent.completed' AND data ->> 'runId' = $1`, [done.id]);
    assert.equal(rows[0].data.output.text, 'BTC is at 7000.', 'agent.completed carries output.text');
  });

  it('calls the tools the model asks for and hands their results back: model, tool, model', async () => {
    models.script('m-tools', (call, n) => {
      if (n === 0) return toolCallsReply([{ id: 'call_1', name: 'lookup', arguments: { email: 'ann@example.com' } }]);
      return textReply(`Ann is on the ${JSON.parse(call.body.messages.at(-1)!.content!).plan} plan.`, { prompt_tokens: 30, completion_tokens: 9 });
    });
    const agentId = await createAgent({ configJson: { model: 'm-tools' } });
    const toolId = await addTool(agentId, {
      type: 'custom',
      name: 'lookup',
      description: 'Finds a customer',
      configJson: {
        endpoint: `${service.url}/customers`,
        method: 'POST',
        bodyTemplate: '{"q": {{input.email}}}',
        responseMapping: { plan: 'plan' },
        parameters: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
      },
    });

    const done = await run(agentId, { input: { question: 'Which plan is Ann on?' } });
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.output.text, 'Ann is on the gold plan.');
    assert.deepEqual(done.output.usage, { promptTokens: 50, completionTokens: 16 });
    assert.deepEqual(done.output.steps.map((s: { type: string; name: string; ok: boolean }) => [s.type, s.name, s.ok]), [
      ['model', 'm-tools', true],
      ['tool', 'lookup', true],
      ['model', 'm-tools', true],
    ]);

    const calls = service.requests.filter((r) => r.url === '/customers');
    assert.equal(calls.length, 1);
    assert.deepEqual(JSON.parse(calls[0]!.body), { q: 'ann@example.com' }, 'bodyTemplate filled from the arguments');

    const [first, second] = models.callsFor('m-tools');
    assert.deepEqual(first!.body.messages, [{ role: 'user', content: '{"question":"Which plan is Ann on?"}' }], 'JSON input as its text');
    assert.deepEqual(second!.body.messages.slice(1), [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"email":"ann@example.com"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"plan":"gold"}' },
    ]);

    const steps = await stepsOf(done.id);
    assert.deepEqual(steps.map((s) => [s.index, s.type, s.name]), [[0, 'model', 'm-tools'], [1, 'tool', 'lookup'], [2, 'model', 'm-tools']]);
    assert.equal(steps[1]!.toolId, toolId);
    assert.deepEqual(steps[1]!.input, { callId: 'call_1', arguments: { email: 'ann@example.com' } });
    assert.deepEqual(steps[1]!.output, { plan: 'gold' });
    assert.equal(steps[2]!.input, null, 'later model steps continue the conversation');

    // The run began in its first step's activity (beginRunStep) and its last step ended it (engine/runs/index.ts
    // lastStepEnds): no local activity at all (no beginRun, no finishRun), one marker (the patch), one
    // activity task per step; agent.completed once; every step's attempt timed.
    const history = await h.engine.client.workflow.getHandle(workflowIds.run(done.id)).fetchHistory();
    const localActivities = (history.events ?? []).flatMap((e) => {
      const marker = e.markerRecordedEventAttributes;
      if (marker?.markerName !== 'core_local_activity') return [];
      const data = Object.values(marker.details ?? {}).flatMap((d) => (d.payloads ?? []).map((p) => Buffer.from(p.data ?? []).toString('utf8')));
      return ['beginRun', 'finishRun', 'failRun'].filter((type) => data.some((text) => text.includes(`"${type}"`)));
    });
    assert.deepEqual(localActivities, []);
    assert.equal((history.events ?? []).filter((e) => e.markerRecordedEventAttributes).length, 1, 'the patch run-begun-by-first-step alone');
    const activityTasks = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    assert.deepEqual(activityTasks, ['beginRunStep', 'runToolStep', 'runModelStep'], 'one activity task per step');
    const { rows: ended } = await h.db.query(`SELECT count(*)::int AS n FROM events WHERE type = 'agent.completed' AND data->>'runId' = $1`, [done.id]);
    assert.equal(ended[0].n, 1);
    const { rows: timed } = await h.db.query(`SELECT started_at, finished_at FROM run_steps WHERE run_id = $1 ORDER BY step_index`, [done.id]);
    assert.ok(timed.every((r) => r.started_at && r.finished_at && r.started_at <= r.finished_at), JSON.stringify(timed));
  });

  it('beginRunStep begins a run and makes its first step; a retry after the step was recorded calls nothing again and answers the same queue', async () => {
    models.script('m-retry', () => toolCallsReply([{ id: 'c1', name: 'lookup', arguments: { email: 'bo@example.com' } }]));
    const owner = await registerUser(h.app);
    const agentId = await createAgent({ configJson: { model: 'm-retry' } }, owner);
    const res = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${agentId}/tools`,
      headers: owner.auth,
      payload: { type: 'custom', name: 'lookup', configJson: { endpoint: `${service.url}/retry`, method: 'POST', bodyTemplate: '{{input}}' } },
    });
    assert.equal(res.statusCode, 201, res.body);
    // A queued run whose workflow is not started: its activity is called here, as Temporal's retries would call it.
    const { rows } = await h.db.query(`INSERT INTO runs (account_id, agent_id, input) SELECT account_id, id, '"who?"' FROM agents WHERE id = $1 RETURNING id`, [agentId]);
    const runId = rows[0].id as string;
    const activities = createRunActivities(h.activityDeps());
    const input = { runId, timeoutMs: h.config.runs.timeoutMs };

    const answer = await activities.beginRunStep(input);
    assert.equal(answer.begun.status, 'running');
    const queueOf = (a: BegunRun) => [...(a.begun.status === 'running' ? a.begun.steps : []), ...(a.first?.status === 'done' ? (a.first.next ?? []) : [])];
    const expected = [{ runId, index: 1, type: 'tool' }, { runId, index: 2, type: 'model' }];
    assert.deepEqual(answer.first, { status: 'done', ok: true, next: expected }, 'the model step, made in the same activity, added a tool step and the next model step');
    assert.deepEqual(queueOf(answer), expected);
    assert.equal(models.callsFor('m-retry').length, 1);

    // A retry of the activity (its answer lost after the step was recorded): the run is running and its first
    // step finished, so the model is not asked again, and the steps the step added are answered once, after the planned ones.
    const retried = await activities.beginRunStep(input);
    assert.equal(models.callsFor('m-retry').length, 1, 'the first step is never made twice');
    assert.deepEqual(retried.first, answer.first);
    assert.deepEqual(queueOf(retried), expected, 'no step twice in the queue');
    assert.ok(retried.begun.status === 'running' && retried.begun.timeoutMs > 0 && retried.begun.timeoutMs <= input.timeoutMs);
    const { rows: steps } = await h.db.query(`SELECT step_index, planned_by, finished_at IS NOT NULL AS done FROM run_steps WHERE run_id = $1 ORDER BY step_index`, [runId]);
    assert.deepEqual(steps.map((st) => [st.step_index, st.planned_by, st.done]), [[0, null, true], [1, 0, false], [2, 0, false]]);
    assert.deepEqual(await activities.failRun({ runId, error: 'ended by the test' }), { status: 'failed' }, 'its later steps are not made here');
  });

  it('checks the arguments against the tool\'s schema, refuses made-up functions, and lets the model narrow a data tool', async () => {
    models.script('m-args', (_call, n) =>
      n === 0
        ? toolCallsReply([
            { id: 'a', name: 'lookup', arguments: { email: 42 } },
            { id: 'b', name: 'transfer_funds', arguments: {} },
            { id: 'c', name: 'prices', arguments: { coinIds: ['solana'] } },
            { id: 'd', name: 'prices', arguments: 'not json' },
          ])
        : textReply('done'),
    );
    const agentId = await createAgent({ configJson: { model: 'm-args' } });
    await addTool(agentId, {
      type: 'custom',
      name: 'lookup',
      configJson: { endpoint: `${service.url}/never`, parameters: { type: 'object', properties: { email: { type: 'string' } } } },
    });
    await addTool(agentId, { type: 'coin_prices', name: 'prices', configJson: { coinIds: ['bitcoin'] } });

    const done = await run(agentId, { input: 'go' });
    assert.equal(done.status, 'succeeded', 'failing tools are the model\'s to read, not the run\'s failure');
    assert.equal(service.requests.some((r) => r.url === '/never'), false, 'a call whose arguments do not match is not made');
    const results = models.callsFor('m-args')[1]!.body.messages.filter((m) => m.role === 'tool');
    assert.deepEqual(results.map((m) => [m.tool_call_id, JSON.parse(m.content!)]), [
      ['a', { error: "the arguments do not match the tool's parameters: /email: must be string" }],
      ['b', { error: 'the model called "transfer_funds", which is not one of the tools it was offered' }],
      ['c', { solana: { usd: fakeUsdPrice('solana') } }],
      ['d', { error: 'the arguments must be a JSON object, not this text' }],
    ]);
    assert.deepEqual(done.output.steps.map((s: { ok: boolean }) => s.ok), [true, false, false, true, false, true]);
  });

  it('makes at most maxSteps model calls; the last is asked to answer in text, and a model that still asks for tools fails the run', async () => {
    const ask = () => toolCallsReply([{ name: 'prices', arguments: {} }]);
    models.script('m-honest', (call) => (call.body.tool_choice === 'none' ? textReply('enough looking') : ask()));
    models.script('m-stubborn', ask);
    const before = data.coinGecko.requests.length;

    const honest = await createAgent({ configJson: { model: 'm-honest', maxSteps: 3 } });
    await addTool(honest, { type: 'coin_prices', name: 'prices', configJson: { coinIds: ['bitcoin'] } });
    const ok = await run(honest, { input: 'loop' });
    assert.equal(ok.status, 'succeeded', JSON.stringify(ok));
    assert.equal(ok.output.text, 'enough looking');
    assert.deepEqual(models.callsFor('m-honest').map((c) => c.body.tool_choice ?? 'auto'), ['auto', 'auto', 'none']);
    assert.equal(data.coinGecko.requests.length - before, 2, 'two tool calls between three model calls');

    const stubborn = await createAgent({ configJson: { model: 'm-stubborn', maxSteps: 2 } });
    await addTool(stubborn, { type: 'coin_prices', name: 'prices', configJson: { coinIds: ['bitcoin'] } });
    const failed = await run(stubborn, { input: 'loop' });
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error, 'maxSteps (2) reached: the model still asked for tools (prices) at its last allowed call');
    assert.equal(models.callsFor('m-stubborn').length, 2);
    assert.deepEqual(failed.output.steps.map((s: { type: string }) => s.type), ['model', 'tool', 'model'], 'the last answer\'s tool calls are not made');
  });

  it('retries a 429 inside the step and records the step once', async () => {
    models.script('m-429', (_call, n) => (n === 0 ? errorReply(429, 'Rate limit reached', { 'retry-after-ms': '50' }) : textReply('after the wait')));
    const agentId = await createAgent({ configJson: { model: 'm-429' } });
    const done = await run(agentId, { input: 'hi' });
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.output.text, 'after the wait');
    assert.equal(models.callsFor('m-429').length, 2);
    assert.equal((await stepsOf(done.id)).length, 1);
  });

  it('fails the run when the provider stays unavailable, after MODEL_MAX_RETRIES retries', async () => {
    models.script('m-down', () => errorReply(503, 'The server is overloaded', { 'retry-after-ms': '10' }));
    const agentId = await createAgent({ configJson: { model: 'm-down' } });
    const done = await run(agentId, { input: 'hi' });
    assert.equal(done.status, 'failed');
    assert.equal(done.error, 'the model provider answered HTTP 503 (3 attempts): The server is overloaded');
    assert.equal(models.callsFor('m-down').length, 3);
  });

  it('fails the run with the provider\'s message on a 4xx, without retrying', async () => {
    models.script('m-400', () => errorReply(400, "Invalid 'messages[0].content': string too long."));
    const agentId = await createAgent({ configJson: { model: 'm-400' } });
    const done = await run(agentId, { input: 'hi' });
    assert.equal(done.status, 'failed');
    assert.equal(done.error, "the model provider refused the request (HTTP 400): Invalid 'messages[0].content': string too long.");
    assert.equal(models.callsFor('m-400').length, 1);
    const [step] = await stepsOf(done.id);
    assert.equal(step!.error, done.error);
  });

  it('never shows the key, even when the provider echoes it', async () => {
    const masked = `${KEY.slice(0, 8)}${'*'.repeat(20)}${KEY.slice(-4)}`;
    models.script('m-401', () => errorReply(401, `Incorrect API key provided: ${KEY}. Also known as ${masked}.`));
    const agentId = await createAgent({ configJson: { model: 'm-401' } });
    const done = await run(agentId, { input: 'hi' });
    assert.equal(done.status, 'failed');
    assert.equal(done.error, 'the model provider refused the request (HTTP 401): Incorrect API key provided: [redacted]. Also known as [redacted]');

    const seen = [
      (await h.app.inject({ method: 'GET', url: `/api/runs/${done.id}`, headers: user.auth })).body,
      (await h.app.inject({ method: 'GET', url: `/api/runs/${done.id}/steps`, headers: user.auth })).body,
      (await h.app.inject({ method: 'GET', url: `/api/agents/${agentId}/runs`, headers: user.auth })).body,
      JSON.stringify((await h.db.query(`SELECT data FROM events WHERE data ->> 'runId' = $1`, [done.id])).rows),
    ].join('\n');
    assert.ok(seen.includes('Incorrect API key provided'), 'the provider\'s message is shown');
    for (const part of [KEY, KEY.slice(0, 8), KEY.slice(-4)]) assert.equal(seen.includes(part), false, `${part} shown`);
  });

  it('keeps the tool executor for an agent that names no model when MODEL_NAME is unset', async () => {
    const agentId = await createAgent({});
    await addTool(agentId, { type: 'coin_prices', name: 'prices', configJson: { coinIds: ['bitcoin'] } });
    const done = await run(agentId, { input: 'x' });
    assert.equal(done.status, 'succeeded');
    assert.equal(done.executor, 'tools');
    assert.equal(done.output.tools.prices.ok, true);
    assert.equal(done.output.text, undefined);
  });

  it('an agent_output trigger filters on the model\'s text and chains the next agent', async () => {
    models.script('m-signal', () => textReply('SIGNAL: buy solana'));
    const source = await createAgent({ configJson: { model: 'm-signal' } });
    const follower = await createAgent({ name: 'follower' });
    const trigger = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${follower}/triggers`,
      headers: user.auth,
      payload: { type: 'agent_output', name: 'on buy', configJson: { eventFilter: { text: { $contains: 'buy' } } } },
    });
    assert.equal(trigger.statusCode, 201, trigger.body);
    const done = await run(source, { input: 'signal?' });
    assert.equal(done.status, 'succeeded');
    const chained = await waitFor('the follower to run', async () => {
      const { rows } = await h.db.query(`SELECT chain_depth, input FROM runs WHERE agent_id = $1`, [follower]);
      return rows[0];
    }, 30_000);
    assert.equal(chained.chain_depth, 1);
    assert.equal(chained.input.payload.output.text, 'SIGNAL: buy solana');
  });

  describe('memory', () => {
    /** The conversation the model was sent, minus the system message: [role, content] pairs. */
    const sent = (model: string, i: number) =>
      models.callsFor(model)[i]!.body.messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]);

    it('the model sees the newest memoryConfig.maxMessages messages of the thread, and only of that thread', async () => {
      models.script('m-count', (_call, n) => textReply(`answer ${n}`));
      const agentId = await createAgent({ configJson: { model: 'm-count' }, memoryConfig: { maxMessages: 3 } });
      const first = await run(agentId, { input: 'one', threadId: 'chat-1' });
      assert.equal(first.threadId, 'chat-1');
      await run(agentId, { input: 'two', threadId: 'chat-1' });
      await run(agentId, { input: 'three', threadId: 'chat-1' });
      await run(agentId, { input: 'elsewhere', threadId: 'chat-2' });
      await run(agentId, { input: 'alone' });

      assert.deepEqual(sent('m-count', 0), [['user', 'one']]);
      assert.deepEqual(sent('m-count', 1), [['user', 'one'], ['assistant', 'answer 0'], ['user', 'two']]);
      assert.deepEqual(sent('m-count', 2), [['assistant', 'answer 0'], ['user', 'two'], ['assistant', 'answer 1'], ['user', 'three']], 'the newest 3, oldest first');
      assert.deepEqual(sent('m-count', 3), [['user', 'elsewhere']], 'another thread remembers nothing of this one');
      assert.deepEqual(sent('m-count', 4), [['user', 'alone']], 'a run without a thread remembers nothing');

      const thread = await readAllPages(h.app, user, `/api/agents/${agentId}/threads/chat-1/messages?limit=4`);
      const messages = thread.items as unknown as { role: string; content: string; runId: string; threadId: string; agentId: string }[];
      assert.deepEqual(messages.map((m) => [m.role, m.content]), [
        ['assistant', 'answer 2'], ['user', 'three'], ['assistant', 'answer 1'], ['user', 'two'], ['assistant', 'answer 0'], ['user', 'one'],
      ], 'newest first, paged');
      assert.equal(thread.pages, 2);
      assert.equal(messages.at(-1)!.runId, first.id);
      assert.ok(messages.every((m) => m.threadId === 'chat-1' && m.agentId === agentId));
    });

    it('forgets messages older than memoryConfig.ttlMinutes, and all of them with memoryConfig.type none', async () => {
      models.script('m-age', (_call, n) => textReply(`answer ${n}`));
      const agentId = await createAgent({ configJson: { model: 'm-age' }, memoryConfig: { maxMessages: 50, ttlMinutes: 5 } });
      const old = await run(agentId, { input: 'long ago', threadId: 't' });
      // Ten minutes pass for the first exchange.
      await h.db.query(`UPDATE thread_messages SET created_at = created_at - interval '10 minutes' WHERE run_id = $1`, [old.id]);
      await run(agentId, { input: 'recently', threadId: 't' });
      await run(agentId, { input: 'now', threadId: 't' });
      assert.deepEqual(sent('m-age', 2), [['user', 'recently'], ['assistant', 'answer 1'], ['user', 'now']]);

      const patched = await h.app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: user.auth, payload: { memoryConfig: { type: 'none' } } });
      assert.equal(patched.statusCode, 200, patched.body);
      await run(agentId, { input: 'forgetful', threadId: 't' });
      assert.deepEqual(sent('m-age', 3), [['user', 'forgetful']]);
      const listed = await h.app.inject({ method: 'GET', url: `/api/agents/${agentId}/threads/t/messages`, headers: user.auth });
      assert.equal(listed.json().length, 8, 'the thread still records every exchange');
    });

    it('a failed run adds nothing to its thread; threads of other accounts and malformed ids answer 404', async () => {
      models.script('m-fails', () => errorReply(400, 'bad request'));
      const agentId = await createAgent({ configJson: { model: 'm-fails' } });
      const failed = await run(agentId, { input: 'hello', threadId: 'x' });
      assert.equal(failed.status, 'failed');
      const empty = await h.app.inject({ method: 'GET', url: `/api/agents/${agentId}/threads/x/messages`, headers: user.auth });
      assert.equal(empty.statusCode, 200);
      assert.deepEqual(empty.json(), []);

      const stranger = await registerUser(h.app);
      const other = await h.app.inject({ method: 'GET', url: `/api/agents/${agentId}/threads/x/messages`, headers: stranger.auth });
      assert.equal(other.statusCode, 404);
      assert.deepEqual(other.json(), { message: 'Agent not found' });
      const malformed = await h.app.inject({ method: 'GET', url: `/api/agents/${agentId}/threads/a%20b/messages`, headers: user.auth });
      assert.equal(malformed.statusCode, 404);
      const bad = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs`, headers: user.auth, payload: { threadId: 'a b' } });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.json().message, /^body\.threadId: /);
    });
  });
});
