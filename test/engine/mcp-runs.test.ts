import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createRunActivities } from '../../engine/runs';
import { readAllPages, registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { startEverythingServer, startOwnMcpServer, type RunningMcpServer } from '../helpers/mcp-servers';
import { startModelServer, textReply, toolCallsReply, type ChatMessage, type ModelServer } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';

/**
 * Model runs with `mcp` tools through the whole engine (API → run workflow → model and tool steps) against
 * the reference server-everything on loopback, a scripted model provider, and a server of our own where a
 * test counts calls. TOOL_TIMEOUT_MS is 2 s here: the hanging call's test waits that long, no more.
 */
describe('model runs with MCP tools (docs/api.md § MCP tools)', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let models: ModelServer;
  let everything: RunningMcpServer;
  let user: TestUser;

  before(async () => {
    models = await startModelServer(suite);
    everything = await startEverythingServer(suite);
    h = await startEngine(suite, __filename, { MODEL_BASE_URL: models.baseUrl, MODEL_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0', TOOL_TIMEOUT_MS: '2000' });
    user = await registerUser(h.app);
  });

  async function agentWith(model: string, tools: Record<string, unknown>[], owner = user): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: '/api/agents', headers: owner.auth, payload: { name: 'mcp user', configJson: { model } } });
    assert.equal(res.statusCode, 201, res.body);
    const agentId = res.json().id as string;
    for (const tool of tools) {
      const added = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/tools`, headers: owner.auth, payload: tool });
      assert.equal(added.statusCode, 201, added.body);
    }
    return agentId;
  }

  async function start(agentId: string, input: unknown, owner = user): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs`, headers: owner.auth, payload: { input } });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().id;
  }

  async function ended(runId: string, owner = user, timeoutMs = 30_000) {
    return waitFor(`run ${runId} to end`, async () => {
      const r = (await h.app.inject({ method: 'GET', url: `/api/runs/${runId}`, headers: owner.auth })).json();
      return (r.status === 'succeeded' || r.status === 'failed') && r;
    }, timeoutMs);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- steps are read as JSON, field by field
  const stepsOf = async (runId: string, owner = user) => (await readAllPages(h.app, owner, `/api/runs/${runId}/steps`)).items as unknown as Record<string, any>[];
  const toolMessages = (messages: ChatMessage[]) => messages.filter((m) => m.role === 'tool').map((m) => m.content);

  it("offers the server's functions under <tool>_<function> with its schemas, and records its real answers (echo, get-sum)", async () => {
    models.script('mcp-echo-sum', (_call, n) =>
      n === 0
        ? toolCallsReply([
            { id: 'e', name: 'everything_echo', arguments: { message: 'hello from the run' } },
            { id: 's', name: 'everything_get-sum', arguments: { a: 2, b: 40 } },
          ])
        : textReply('2 + 40 is 42.'),
    );
    const agentId = await agentWith('mcp-echo-sum', [
      { type: 'coin_prices', name: 'prices', configJson: { coinIds: ['bitcoin'] } },
      { type: 'mcp', name: 'everything', configJson: { url: everything.url } },
    ]);
    const run = await ended(await start(agentId, 'add 2 and 40'));
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.equal(run.output.text, '2 + 40 is 42.');

    const [first, second] = models.callsFor('mcp-echo-sum');
    const offered = first!.body.tools!.map((t) => t.function);
    assert.equal(offered[0]!.name, 'prices', 'the other tools first');
    const echo = offered.find((f) => f.name === 'everything_echo')!;
    assert.equal(echo.description, 'Echoes back the input string');
    assert.deepEqual((echo.parameters as { properties: unknown }).properties, { message: { type: 'string', description: 'Message to echo' } });
    const sum = offered.find((f) => f.name === 'everything_get-sum')!;
    assert.deepEqual((sum.parameters as { required: string[] }).required, ['a', 'b']);
    assert.ok(offered.some((f) => f.name === 'everything_trigger-long-running-operation'), 'every function the server lists');

    const steps = await stepsOf(run.id);
    assert.deepEqual(
      steps.map((s) => [s.type, s.name, s.output, s.error]),
      [
        ['model', 'mcp-echo-sum', steps[0]!.output, null],
        ['tool', 'everything_echo', 'Echo: hello from the run', null],
        ['tool', 'everything_get-sum', 'The sum of 2 and 40 is 42.', null],
        ['model', 'mcp-echo-sum', steps[3]!.output, null],
      ],
    );
    assert.deepEqual(steps[1]!.input, { callId: 'e', arguments: { message: 'hello from the run' }, function: 'echo' });
    assert.deepEqual(toolMessages(second!.body.messages), ['Echo: hello from the run', 'The sum of 2 and 40 is 42.'], 'the model reads the answers');
    assert.deepEqual(second!.body.tools!.map((t) => t.function.name), offered.map((f) => f.name), 'the same functions at the next call (kept list)');
  });

  it("fails the step with the server's isError text, which the model reads, and the run goes on", async () => {
    models.script('mcp-is-error', (_call, n) =>
      n === 0 ? toolCallsReply([{ id: 'bad', name: 'everything_get-sum', arguments: { a: 'two', b: 2 } }]) : textReply('I could not add those.'),
    );
    const agentId = await agentWith('mcp-is-error', [{ type: 'mcp', name: 'everything', configJson: { url: everything.url } }]);
    const run = await ended(await start(agentId, 'add two and 2'));
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const [, tool] = await stepsOf(run.id);
    assert.equal(tool!.output, null);
    assert.match(tool!.error, /Input validation error: Invalid arguments for tool get-sum: .*expected number/);
    const told = toolMessages(models.callsFor('mcp-is-error')[1]!.body.messages);
    assert.deepEqual(told, [JSON.stringify({ error: tool!.error })]);
    assert.deepEqual(run.output.steps[1], { index: 1, type: 'tool', name: 'everything_get-sum', ok: false, error: tool!.error, durationMs: run.output.steps[1].durationMs });
  });

  it("offers only the allow-list's functions; a call of another is not made", async () => {
    models.script('mcp-allow', (_call, n) => (n === 0 ? toolCallsReply([{ id: 'x', name: 'everything_get-env', arguments: {} }]) : textReply('done')));
    const agentId = await agentWith('mcp-allow', [{ type: 'mcp', name: 'everything', configJson: { url: everything.url, functions: ['echo'] } }]);
    const run = await ended(await start(agentId, 'show me the environment'));
    assert.deepEqual(models.callsFor('mcp-allow')[0]!.body.tools!.map((t) => t.function.name), ['everything_echo']);
    const [, tool] = await stepsOf(run.id);
    assert.equal(tool!.error, 'the model called "everything_get-env", which is not one of the tools it was offered');
  });

  it('a server that hangs fails its step at TOOL_TIMEOUT_MS and the run ends; another account\'s run meanwhile is not held up', async () => {
    models.script('mcp-hang', (_call, n) =>
      n === 0 ? toolCallsReply([{ id: 'h', name: 'everything_trigger-long-running-operation', arguments: { duration: 120, steps: 1 } }]) : textReply('it took too long'),
    );
    models.script('mcp-other', () => textReply('hello from the other account'));
    const hangAgent = await agentWith('mcp-hang', [{ type: 'mcp', name: 'everything', configJson: { url: everything.url } }]);
    const other = await registerUser(h.app);
    const otherAgent = await agentWith('mcp-other', [], other);

    const hangRun = await start(hangAgent, 'wait for it');
    await waitFor('the hanging call to start', async () => (await stepsOf(hangRun)).some((s) => s.type === 'tool' && s.startedAt && !s.finishedAt), 20_000);
    const otherStarted = Date.now();
    const otherRun = await ended(await start(otherAgent, 'hi', other), other);
    const otherTook = Date.now() - otherStarted;
    assert.equal(otherRun.status, 'succeeded');
    const stillHanging = (await stepsOf(hangRun)).find((s) => s.type === 'tool')!;
    assert.equal(stillHanging.finishedAt, null, `the other account's run ended (${otherTook} ms) while the call still hung`);

    const run = await ended(hangRun);
    assert.equal(run.status, 'succeeded', 'the model read the timeout and answered');
    const tool = (await stepsOf(run.id)).find((s) => s.type === 'tool')!;
    assert.equal(tool.error, 'the MCP server did not answer within 2000 ms (TOOL_TIMEOUT_MS)');
    const took = Date.parse(tool.finishedAt) - Date.parse(tool.startedAt);
    assert.ok(took >= 1900 && took < 6000, `the step failed at the timeout (${took} ms)`);
  });

  it('fails the run naming the tool when its server cannot be reached to list its functions', async () => {
    models.script('mcp-down', () => textReply('never asked'));
    const agentId = await agentWith('mcp-down', [{ type: 'mcp', name: 'gone', configJson: { url: 'http://127.0.0.1:9/mcp' } }]);
    const run = await ended(await start(agentId, 'hello'));
    assert.equal(run.status, 'failed');
    assert.match(run.error, /^MCP tool "gone": the MCP server could not be reached: ECONNREFUSED/);
    assert.equal(models.callsFor('mcp-down').length, 0, 'the model is not asked without the functions');
  });

  it('a call that returned is not made again when its step is asked again (a resumed run)', async () => {
    const own = await startOwnMcpServer(suite, (server) => {
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'count', description: 'Counts', inputSchema: { type: 'object' } }] }));
      server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: 'counted' }] }));
    });
    models.script('mcp-once', () => toolCallsReply([{ id: 'c', name: 'own_count', arguments: {} }]));
    const agentId = await agentWith('mcp-once', [{ type: 'mcp', name: 'own', configJson: { url: own.url } }]);
    // A queued run whose workflow is not started: its activities are called here, as Temporal's retries would call them.
    const { rows } = await h.db.query(`INSERT INTO runs (account_id, agent_id, input) SELECT account_id, id, '"count"' FROM agents WHERE id = $1 RETURNING id`, [agentId]);
    const runId = rows[0].id as string;
    const activities = createRunActivities(h.activityDeps());
    const begun = await activities.beginRunStep({ runId, timeoutMs: h.config.runs.timeoutMs });
    assert.deepEqual(begun.first, { status: 'done', ok: true, next: [{ runId, index: 1, type: 'tool' }, { runId, index: 2, type: 'model' }] });

    const ref = { runId, index: 1, type: 'tool' as const };
    const first = await activities.runToolStep(ref);
    assert.equal(own.calls.get('tools/call'), 1);
    const again = await activities.runToolStep(ref);
    assert.deepEqual(again, first);
    assert.equal(own.calls.get('tools/call'), 1, 'the call that returned is not made again');
    const [, step] = await stepsOf(runId);
    assert.equal(step!.output, 'counted');
    await activities.failRun({ runId, error: 'ended by the test' });
  });

  it('without a model, an MCP tool step says why it makes no call', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: 'no model' } });
    const agentId = res.json().id as string;
    await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/tools`, headers: user.auth, payload: { type: 'mcp', name: 'everything', configJson: { url: everything.url } } });
    const run = await ended(await start(agentId, { function: 'echo', arguments: { message: 'sneaky' } }));
    assert.equal(run.executor, 'tools');
    assert.equal(run.status, 'failed');
    assert.match(run.output.tools.everything.error, /^an MCP tool's functions are called by a language model/);
  });
});
