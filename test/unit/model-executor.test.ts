import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { suiteContext } from '../helpers/cleanup';
import { createModelClient, ModelError, redactKey } from '../../engine/runs/executor/model-client';
import { createModelExecutor } from '../../engine/runs/executor/model-executor';
import { fitRequest, requestOf, type ModelAnswer, type ModelContext } from '../../engine/runs/executor/model-step';
import { composeSystemMessage, userMessage } from '../../engine/runs/executor/system-message';
import { applyArguments, functionName, offerTools } from '../../engine/runs/executor/tool-functions';
import type { RunStepRow } from '../../db/repositories/run-steps';
import type { ToolRow } from '../../db/repositories/tools';
import { compileJsonSchema } from '../../lib/json-schema';
import { jsonBytes, MAX_RUN_OUTPUT_BYTES } from '../../engine/runs/executor/output-cap';
import { errorReply, startModelServer, textReply, type ModelServer } from '../helpers/model-server';
import { testConfig } from '../helpers/config';

const agentFields = { system_prompt: '', persona: '', goal: '', voice: '', policies: [] as never[] };

describe('system message and user message', () => {
  it('is null when every field is empty, and keeps only the fields that are set', () => {
    assert.equal(composeSystemMessage(agentFields), null);
    assert.equal(composeSystemMessage({ ...agentFields, goal: '  Win  ', policies: ['', 'Be kind'] as never[] }), '## Goal\nWin\n\n## Policies\n- Be kind');
  });

  it('takes a string input as it is and other JSON as its text', () => {
    assert.equal(userMessage('hi "there"'), 'hi "there"');
    assert.equal(userMessage({ a: [1, 'b'] }), '{"a":[1,"b"]}');
    assert.equal(userMessage(0), '0');
    assert.equal(userMessage(null), null);
  });
});

describe('tools as functions', () => {
  it('makes names valid function names, unique, at most 64 characters', () => {
    const taken = new Set<string>();
    assert.equal(functionName('Get price (USD)!', taken), 'Get_price_USD');
    assert.equal(functionName('Get price: USD', taken), 'Get_price_USD_2');
    assert.equal(functionName('', taken), 'tool');
    assert.equal(functionName('日本語', taken), 'tool_2');
    const long = functionName('x'.repeat(100), taken);
    assert.equal(long.length, 64);
    assert.equal(functionName('x'.repeat(100), taken), `${'x'.repeat(62)}_2`);
    for (const name of taken) assert.match(name, /^[A-Za-z0-9_-]{1,64}$/);
  });

  const tool = (type: ToolRow['type'], config_json: Record<string, unknown>) => ({ id: 'id', name: 'n', description: '', type, config_json }) as ToolRow;

  it('offers data tools a fixed schema and custom tools their parameters (default an object)', () => {
    const [coins, custom, bare] = offerTools([tool('coin_prices', { coinIds: ['bitcoin'] }), tool('custom', { parameters: { type: 'object', required: ['a'] } }), tool('custom', {})]);
    assert.equal((coins!.parameters as { additionalProperties: boolean }).additionalProperties, false);
    assert.match(coins!.description, /CoinGecko/);
    assert.deepEqual(custom!.parameters, { type: 'object', required: ['a'] });
    assert.deepEqual(bare!.parameters, { type: 'object' });
  });

  it('narrows a data tool to the arguments given and refuses arguments the schema does not allow', () => {
    const coins = tool('coin_prices', { coinIds: ['bitcoin'] });
    assert.deepEqual(applyArguments(coins, { coinIds: ['solana'] }), { tool: { ...coins, config_json: { coinIds: ['solana'] } }, input: { coinIds: ['solana'] } });
    assert.deepEqual(applyArguments(coins, {}), { tool: coins, input: {} });
    assert.deepEqual(applyArguments(coins, { coinIds: [] }), { error: "the arguments do not match the tool's parameters: /coinIds: must NOT have fewer than 1 items" });
    assert.deepEqual(applyArguments(coins, { vs: 'eur' }), { error: 'the arguments do not match the tool\'s parameters: (the arguments): must NOT have additional properties ("vs")' });
    assert.deepEqual(applyArguments(coins, [1]), { error: 'the arguments must be a JSON object, not [1]' });
  });

  it('compiles a schema once while it is in use (a compile costs milliseconds, each call of a run checks its arguments)', () => {
    const schema = { $id: 'https://example.com/kept', type: 'object', properties: { n: { type: 'number' } } };
    const first = compileJsonSchema(schema);
    const again = compileJsonSchema(JSON.parse(JSON.stringify(schema)));
    assert.ok(first.ok && again.ok);
    assert.equal(again.validate, first.validate, 'the same JSON: the compiled validator kept');
    assert.equal(again.validate({ n: 'x' }), false);
    assert.equal(again.validate({ n: 1 }), true);
    const other = compileJsonSchema({ ...schema, $id: 'https://example.com/other' });
    assert.ok(other.ok && other.validate !== first.validate);
    const refused = compileJsonSchema({ type: 'object', properties: { s: { type: 'string', pattern: '(?=a)' } } });
    assert.equal(refused.ok, false);
    assert.deepEqual(compileJsonSchema({ type: 'object', properties: { s: { type: 'string', pattern: '(?=a)' } } }), refused);
    // Many schemas later, the first is compiled afresh (the cache is bounded), and still works.
    for (let i = 0; i < 300; i++) compileJsonSchema({ type: 'object', maxProperties: i });
    const fresh = compileJsonSchema(schema);
    assert.ok(fresh.ok && fresh.validate !== first.validate && fresh.validate({ n: 1 }));
  });

  it('matches `pattern` with RE2: a catastrophic pattern answers at once', () => {
    const custom = tool('custom', { parameters: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } });
    const started = performance.now();
    assert.ok('error' in applyArguments(custom, { s: `${'a'.repeat(5000)}b` }));
    assert.ok(performance.now() - started < 1000);
  });
});

describe('redactKey', () => {
  const key = 'sk-proj-abcdefghijklmnopqrstuvwxyzAc0A1';
  it('removes the key and words holding its head or tail', () => {
    assert.equal(redactKey(`bad key ${key}!`, key), 'bad key [redacted]!');
    assert.equal(redactKey('Incorrect API key provided: sk-proj-********zAc0A1. See docs.', key), 'Incorrect API key provided: [redacted] See docs.');
    assert.equal(redactKey('no key here', key), 'no key here');
    assert.equal(redactKey('anything', null), 'anything');
  });
});

describe('model executor compose', () => {
  const executor = createModelExecutor({ model: 'm' });
  const context: ModelContext = { model: 'm', temperature: null, maxSteps: 2, messages: [], tools: [] };
  const at = new Date(0);
  const step = (index: number, s: Partial<RunStepRow>): RunStepRow => ({
    run_id: 'r', step_index: index, type: 'model', name: 'm', tool_id: null, tool_type: null, input: null, output: null, error: null,
    usage: null, planned_by: null, started_at: at, finished_at: at, created_at: at, ...s,
  });
  const answer = (content: string | null, tools: string[] = []): ModelAnswer => ({ content, toolCalls: tools.map((name, i) => ({ id: `c${i}`, name, arguments: '{}' })), finishReason: null });

  it('plans one model step holding the run context, or refuses an agent without a model', () => {
    const agent = { ...agentFields, config_json: { maxSteps: 3 } } as never;
    const [planned] = executor.plan({ agent, tools: [], input: 'hi', history: [] });
    assert.deepEqual(planned, {
      type: 'model',
      name: 'm',
      input: { model: 'm', temperature: null, maxSteps: 3, messages: [{ role: 'user', content: 'hi' }], tools: [], remembered: 0 },
    });
    assert.throws(() => createModelExecutor({ model: null }).plan({ agent, tools: [], input: 'hi', history: [] }), /no model/);
    assert.throws(() => executor.plan({ agent: { ...agentFields, config_json: { maxSteps: 99 } } as never, tools: [], input: 1, history: [] }), /configJson\.maxSteps/);
  });

  it('keeps the context within MODEL_CONTEXT_MAX_BYTES: the oldest remembered messages go first; refuses a model outside MODEL_ALLOWED', () => {
    const bounded = createModelExecutor({ model: 'm', allowed: ['m'], contextMaxBytes: 600 });
    const agent = { ...agentFields, system_prompt: 'Be brief.', config_json: {} } as never;
    const said = (i: number) => ({ role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content: `message ${i} ${'x'.repeat(90)}` });
    const history = Array.from({ length: 8 }, (_, i) => said(i)) as never[];
    const [planned] = bounded.plan({ agent, tools: [], input: 'now', history });
    const context = planned!.input as ModelContext;
    const sent = requestOf(context, [], false);
    assert.ok(Buffer.byteLength(JSON.stringify(sent)) <= 600, `${Buffer.byteLength(JSON.stringify(sent))} bytes`);
    assert.equal(context.messages[0]!.role, 'system');
    assert.deepEqual(context.messages.at(-1), { role: 'user', content: 'now' });
    assert.ok(context.remembered! > 0 && context.remembered! < 8, `${context.remembered} remembered`);
    assert.deepEqual(context.messages.slice(1, -1), history.slice(8 - context.remembered!), 'the newest kept, oldest first');

    // Later in the run the conversation grows: the request leaves out more of the thread, then fails.
    const grown = fitRequest({ ...sent, messages: [...sent.messages, { role: 'assistant', content: 'y'.repeat(200) }] }, context, 600);
    assert.ok('request' in grown && grown.kept < context.remembered!);
    const tooLarge = fitRequest({ ...sent, messages: [...sent.messages, { role: 'assistant', content: 'y'.repeat(700) }] }, context, 600);
    assert.ok('error' in tooLarge);
    assert.match(tooLarge.error, /more than MODEL_CONTEXT_MAX_BYTES \(600\)/);

    assert.throws(
      () => bounded.plan({ agent: { ...agentFields, config_json: { model: 'other' } } as never, tools: [], input: 'x', history: [] }),
      /configJson\.model: "other" is not an allowed model \(allowed: m\)/,
    );
  });

  it('sums usage, takes the last answer as text, and fails on a model error, a time-out or maxSteps', () => {
    const steps = [
      step(0, { input: context, output: answer(null, ['t']), usage: { promptTokens: 3, completionTokens: 1 } }),
      step(1, { type: 'tool', name: 't', error: 'boom', input: { callId: 'c0', arguments: {} } }),
      step(2, { output: answer('final'), usage: { promptTokens: 5, completionTokens: 2 } }),
    ];
    const ok = executor.compose({ input: null, steps, timedOut: false });
    assert.equal(ok.error, null, 'a tool\'s failure is the model\'s to read');
    assert.equal(ok.output.text, 'final');
    assert.deepEqual(ok.output.usage, { promptTokens: 8, completionTokens: 3 });
    assert.deepEqual((ok.output.steps as { ok: boolean }[]).map((s) => s.ok), [true, false, true]);

    assert.equal(executor.compose({ input: null, steps, timedOut: true }).error, 'timed out');
    const stubborn = [...steps.slice(0, 2), step(2, { output: answer('still', ['t']) })];
    assert.match(executor.compose({ input: null, steps: stubborn, timedOut: false }).error!, /^maxSteps \(2\) reached/);
    const refused = [steps[0]!, steps[1]!, step(2, { error: 'the model provider refused the request (HTTP 400): no' })];
    assert.equal(executor.compose({ input: null, steps: refused, timedOut: false }).error, 'the model provider refused the request (HTTP 400): no');
  });

  it('keeps the output within 256 KiB: step errors go first, then the text is cut', () => {
    const big = 'é'.repeat(200_000);
    const steps = [step(0, { input: context, output: answer(big) })];
    const { output } = executor.compose({ input: null, steps, timedOut: false });
    assert.ok(jsonBytes(output) <= MAX_RUN_OUTPUT_BYTES);
    assert.ok((output.text as string).endsWith('…'));
    assert.ok((output.text as string).length > 130_000, 'cut to what fits, not more');
  });
});

describe('model client', () => {
  const suite = suiteContext();
  let models: ModelServer;
  const saved = process.env.OPENAI_API_KEY;
  before(async () => {
    models = await startModelServer(suite);
    process.env.OPENAI_API_KEY = 'sk-from-the-environment';
  });
  after(async () => {
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
  });
  const client = (overrides: Record<string, string>) => createModelClient(testConfig('postgres://x/y', { MODEL_BASE_URL: models.baseUrl, ...overrides }).model)!;
  const body = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'hi' }] });

  it('sends MODEL_API_KEY, and no Authorization at all without one (never OPENAI_API_KEY from the environment)', async () => {
    models.script('u-auth', () => textReply('ok'));
    await client({ MODEL_API_KEY: 'sk-configured' }).complete(body('u-auth'));
    await client({}).complete(body('u-auth'));
    const [withKey, without] = models.callsFor('u-auth');
    assert.equal(withKey!.headers.authorization, 'Bearer sk-configured');
    assert.equal(without!.headers.authorization, undefined);
  });

  it('is no client without MODEL_BASE_URL', () => {
    assert.equal(createModelClient(testConfig('postgres://x/y').model), null);
  });

  it('retries 5xx MODEL_MAX_RETRIES times, then says so; a 4xx is refused at once', async () => {
    models.script('u-503', () => errorReply(503, 'down', { 'retry-after-ms': '1' }));
    models.script('u-404', () => errorReply(404, 'The model `u-404` does not exist'));
    await assert.rejects(client({ MODEL_MAX_RETRIES: '1' }).complete(body('u-503')), (err: ModelError) => err.refused === false && /HTTP 503 \(2 attempts\): down/.test(err.message));
    assert.equal(models.callsFor('u-503').length, 2);
    await assert.rejects(client({}).complete(body('u-404')), (err: ModelError) => err.refused && err.message === 'the model provider refused the request (HTTP 404): The model `u-404` does not exist');
    assert.equal(models.callsFor('u-404').length, 1);
  });

  it('says a provider that is not there could not be reached, without its address', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const gone = createModelClient(testConfig('postgres://x/y', { MODEL_BASE_URL: `http://127.0.0.1:${port}/v1`, MODEL_MAX_RETRIES: '0' }).model)!;
    await assert.rejects(gone.complete(body('x')), (err: ModelError) => err.message === 'the model provider could not be reached (1 attempts; ECONNREFUSED)');
  });
});
