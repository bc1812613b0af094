import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestUser } from '../helpers/app';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { startModelServer, textReply, toolCallsReply, type ModelServer } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';
import { accountIdOf, joinWorkspace, type Member } from '../helpers/workspaces';

const VIEWER_REFUSAL = 'The editor or admin role is required: viewers have read-only access to this account';

/**
 * Our MCP server (`POST /api/mcp`, docs/api.md § MCP server) through the SDK's own Client over HTTP, as
 * Claude Desktop or an IDE would call it: every tool, as owner, editor and viewer, in the caller's own
 * account and in a joined one; the waits of run_agent against the whole engine (a scripted model on
 * loopback); and what the endpoint refuses (no credential, another host, GET).
 */
describe('MCP server (docs/api.md § MCP server)', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let models: ModelServer;
  let base: string;
  let owner: TestUser;
  let workspace: string;
  let editor: Member;
  let viewer: Member;
  let agentId: string;

  before(async () => {
    models = await startModelServer(suite);
    h = await startEngine(suite, __filename, { MODEL_BASE_URL: models.baseUrl, MODEL_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0', MODEL_TOKENS_PER_DAY: '1000' });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    models.script('mcp-answer', (call) => textReply(`You said: ${call.body.messages.at(-1)!.content}`));
    owner = await registerUser(h.app);
    workspace = await accountIdOf(h.app, owner);
    agentId = (await api(h.app, owner).ok('POST', '/api/agents', { name: 'Echo agent', description: 'Says it back', configJson: { model: 'mcp-answer' } })).id;
    await api(h.app, owner).ok('POST', '/api/agents', { name: 'Paused one', status: 'paused' });
    editor = await joinWorkspace(h.app, owner, 'editor');
    viewer = await joinWorkspace(h.app, owner, 'viewer');
  });

  /** The SDK's client, connected with these headers (a credential, Account-Id). */
  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), { requestInit: { headers } }));
    onCleanup(suite, () => client.close());
    return client;
  }
  const bearer = (u: TestUser) => ({ authorization: `Bearer ${u.accessToken}` });
  const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;

  it('lists its tools with their input schemas', async () => {
    const client = await connect(bearer(owner));
    assert.equal(client.getServerVersion()?.name, 'agent-platform');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['list_agents', 'run_agent', 'get_run', 'decide_approval']);
    assert.deepEqual(tools.find((t) => t.name === 'decide_approval')!.inputSchema.required, ['approvalId', 'decision']);
    for (const tool of tools) assert.ok(tool.description && tool.inputSchema.type === 'object', tool.name);
    const run = tools.find((t) => t.name === 'run_agent')!;
    assert.deepEqual(Object.keys(run.inputSchema.properties ?? {}), ['agentId', 'input', 'threadId', 'waitSeconds']);
    assert.deepEqual((run.inputSchema.properties as Record<string, { maximum?: number }>).waitSeconds!.maximum, 60);
    assert.deepEqual(run.inputSchema.required, ['agentId', 'input']);
    assert.deepEqual(tools.find((t) => t.name === 'get_run')!.inputSchema.required, ['runId']);
  });

  it('the owner lists, runs (waiting for the answer) and reads runs in their own account', async () => {
    const client = await connect(bearer(owner));
    const listed = await call(client, 'list_agents', {});
    assert.equal(listed.isError, undefined, text(listed));
    const agents = (listed.structuredContent as { agents: { id: string; name: string; status: string }[] }).agents;
    assert.deepEqual(agents.map((a) => a.name).sort(), ['Echo agent', 'Paused one']);
    assert.deepEqual(JSON.parse(text(listed)), listed.structuredContent);
    const filtered = await call(client, 'list_agents', { query: 'echo', status: 'draft' });
    assert.deepEqual((filtered.structuredContent as { agents: { id: string }[] }).agents.map((a) => a.id), [agentId]);

    const ran = await call(client, 'run_agent', { agentId, input: 'hello there', waitSeconds: 30 });
    assert.equal(ran.isError, undefined, text(ran));
    assert.equal(text(ran), 'You said: hello there');
    const { runId } = ran.structuredContent as { runId: string };
    const got = await call(client, 'get_run', { runId });
    assert.equal((got.structuredContent as { status: string }).status, 'succeeded');
    assert.deepEqual((got.structuredContent as { output: { text: string } }).output.text, 'You said: hello there');
    const audit = await api(h.app, owner).ok('GET', '/api/account/audit');
    assert.ok(audit.some((e: { action: string; resourceId: string }) => e.action === 'run.create' && e.resourceId === runId), 'audited like the REST call');
  });

  it('answers { runId, status } when the run does not end within waitSeconds', async () => {
    const client = await connect(bearer(owner));
    const started = Date.now();
    const ran = await call(client, 'run_agent', { agentId, input: 'later', waitSeconds: 0 });
    assert.ok(Date.now() - started < 3000);
    const body = JSON.parse(text(ran));
    assert.deepEqual(Object.keys(body), ['runId', 'status']);
    assert.ok(['queued', 'running'].includes(body.status), body.status);
    assert.deepEqual(ran.structuredContent, body);
  });

  it('an editor of a joined workspace lists and runs its agents there, charged to the workspace', async () => {
    const client = await connect(editor.headers);
    const listed = await call(client, 'list_agents', { query: 'Echo' });
    assert.deepEqual((listed.structuredContent as { agents: { id: string }[] }).agents.map((a) => a.id), [agentId]);
    const ran = await call(client, 'run_agent', { agentId, input: 'from the editor' });
    assert.equal(text(ran), 'You said: from the editor');
    const { runId } = ran.structuredContent as { runId: string };
    const run = await api(h.app, owner).ok('GET', `/api/runs/${runId}`);
    assert.equal(run.accountId, workspace);
    // In the editor's own account the workspace's agent does not exist.
    const own = await connect(bearer(editor.user));
    const elsewhere = await call(own, 'run_agent', { agentId, input: 'x' });
    assert.equal(elsewhere.isError, true);
    assert.equal(text(elsewhere), 'Agent not found');
    assert.deepEqual((await call(own, 'list_agents', {})).structuredContent, { agents: [], more: false });
  });

  it("a viewer lists and reads but may not run: an isError result with the REST API's message, and no run", async () => {
    const client = await connect(viewer.headers);
    const listed = await call(client, 'list_agents', {});
    assert.equal((listed.structuredContent as { agents: unknown[] }).agents.length, 2);
    const before = (await h.db.query('SELECT count(*)::int AS n FROM runs WHERE agent_id = $1', [agentId])).rows[0].n;
    const refused = await call(client, 'run_agent', { agentId, input: 'may I?' });
    assert.equal(refused.isError, true);
    assert.equal(text(refused), VIEWER_REFUSAL);
    const rest = await api(h.app, null).post(`/api/agents/${agentId}/runs`, { input: 'may I?' }, viewer.headers);
    assert.equal(rest.statusCode, 403);
    assert.equal(rest.json().message, VIEWER_REFUSAL, 'the same message as the REST API');
    assert.equal((await h.db.query('SELECT count(*)::int AS n FROM runs WHERE agent_id = $1', [agentId])).rows[0].n, before);
    const { rows } = await h.db.query('SELECT id FROM runs WHERE agent_id = $1 LIMIT 1', [agentId]);
    const got = await call(client, 'get_run', { runId: rows[0].id });
    assert.equal((got.structuredContent as { id: string }).id, rows[0].id);
  });

  it('decide_approval decides a waiting run\'s approval as POST /api/approvals/:id/decision does: a viewer is refused, bad arguments and a second decision are isError, an editor\'s approve runs the tool once with the edited arguments', async () => {
    const service = await startReceiver(suite, (req) => ({ body: { paid: JSON.parse(req.body || 'null') } }));
    models.script('mcp-approve', (call, n) => (n === 0 ? toolCallsReply([{ id: 'call_1', name: 'pay', arguments: { amount: 5 } }]) : textReply(`read: ${call.body.messages.at(-1)!.content}`)));
    const payer = (await api(h.app, owner).ok('POST', '/api/agents', { name: 'Payer', configJson: { model: 'mcp-approve' } })).id;
    const parameters = { type: 'object', properties: { amount: { type: 'number', maximum: 100 } }, required: ['amount'], additionalProperties: false };
    await api(h.app, owner).ok('POST', `/api/agents/${payer}/tools`, {
      type: 'custom', name: 'pay', requiresApproval: true, configJson: { endpoint: `${service.url}/pay`, method: 'POST', bodyTemplate: '{{input}}', parameters },
    });
    const client = await connect(bearer(owner));
    const ran = await call(client, 'run_agent', { agentId: payer, input: 'pay', waitSeconds: 0 });
    const { runId } = JSON.parse(text(ran)) as { runId: string };
    await waitFor(`run ${runId} to wait`, async () => (await api(h.app, owner).ok('GET', `/api/runs/${runId}`)).status === 'waiting', 30_000);
    const [approval] = await api(h.app, owner).ok('GET', `/api/runs/${runId}/approvals`);

    const refused = await call(await connect(viewer.headers), 'decide_approval', { approvalId: approval.id, decision: 'approve' });
    assert.equal(refused.isError, true);
    assert.equal(text(refused), VIEWER_REFUSAL);
    const bad = await call(client, 'decide_approval', { approvalId: approval.id, decision: 'approve', arguments: { amount: 500 } });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /arguments.*amount/);
    const unknown = await call(client, 'decide_approval', { approvalId: 'nope', decision: 'approve' });
    assert.equal(text(unknown), 'Approval not found');
    assert.equal((await api(h.app, owner).ok('GET', `/api/approvals/${approval.id}`)).status, 'pending', 'nothing written by the refusals');

    const decided = await call(await connect(editor.headers), 'decide_approval', { approvalId: approval.id, decision: 'approve', arguments: { amount: 7 }, comment: 'ok' });
    assert.equal(decided.isError, undefined, text(decided));
    assert.equal((decided.structuredContent as { status: string }).status, 'approved');
    assert.equal((decided.structuredContent as { decidedBy: string }).decidedBy, editor.user.id);
    const again = await call(client, 'decide_approval', { approvalId: approval.id, decision: 'reject' });
    assert.equal(again.isError, true);
    assert.match(text(again), /already decided: approved/);

    const done = await waitFor(`run ${runId} to end`, async () => {
      const r = await api(h.app, owner).ok('GET', `/api/runs/${runId}`);
      return (r.status === 'succeeded' || r.status === 'failed') && r;
    }, 30_000);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(service.requests.length, 1, 'the tool is called once');
    assert.deepEqual(JSON.parse(service.requests[0]!.body), { amount: 7 }, 'with the edited arguments');
  });

  it('refuses as the REST API does: unknown and malformed ids, a paused agent, bad arguments, the model budget', async () => {
    const client = await connect(bearer(owner));
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['get_run', { runId: '00000000-0000-4000-8000-000000000000' }, /^Run not found$/],
      ['get_run', { runId: 'nope' }, /^Run not found$/],
      ['run_agent', { agentId: 'nope', input: 'x' }, /^Agent not found$/],
      ['run_agent', { agentId, input: 'x', waitSeconds: 61 }, /waitSeconds/],
      ['run_agent', { agentId }, /Input validation error: .* at input$/],
      ['list_agents', { status: 'sleeping' }, /status/],
    ];
    const paused = (await call(client, 'list_agents', { status: 'paused' })).structuredContent as { agents: { id: string }[] };
    cases.push(['run_agent', { agentId: paused.agents[0]!.id, input: 'x' }, /^Agent is paused: paused agents cannot run/]);
    for (const [tool, args, message] of cases) {
      const result = await call(client, tool, args);
      assert.equal(result.isError, true, `${tool} ${JSON.stringify(args)}: ${text(result)}`);
      assert.match(text(result), message);
    }

    // MODEL_TOKENS_PER_DAY (1000 here): a run that spends it, then run_agent is refused like POST …/runs (429).
    const spender = await registerUser(h.app);
    models.script('mcp-spend', () => textReply('spent', { prompt_tokens: 990, completion_tokens: 10 }));
    const agent = (await api(h.app, spender).ok('POST', '/api/agents', { name: 'spender', configJson: { model: 'mcp-spend' } })).id;
    const theirs = await connect(bearer(spender));
    assert.equal(text(await call(theirs, 'run_agent', { agentId: agent, input: 'spend' })), 'spent');
    const over = await call(theirs, 'run_agent', { agentId: agent, input: 'more' });
    assert.equal(over.isError, true);
    assert.match(text(over), /^MODEL_TOKENS_PER_DAY reached: .*start again in \d+ seconds$/);
  });

  it('waits hold no database connection: more waits at once than the pool has connections all get their answer', async () => {
    // The test database's pool (20 connections) serves the API and the worker alike: waits that held one
    // each would leave the worker none, and no run would end within the wait.
    const waits = 24;
    models.script('mcp-slow', (c) => ({ ...textReply(`slow: ${c.body.messages.at(-1)!.content}`), delayMs: 1000 }));
    const slow = (await api(h.app, owner).ok('POST', '/api/agents', { name: 'slow', configJson: { model: 'mcp-slow' } })).id;
    const client = await connect(bearer(owner));
    const answers = await Promise.all(Array.from({ length: waits }, (_, i) => call(client, 'run_agent', { agentId: slow, input: `n${i}`, waitSeconds: 20 })));
    assert.deepEqual(answers.map(text), Array.from({ length: waits }, (_, i) => `slow: n${i}`));
  });

  it('without a credential: 401 with WWW-Authenticate: Bearer; GET and DELETE: 405', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const accept = { accept: 'application/json, text/event-stream' };
    const anonymous = await api(base, null).post('/api/mcp', initialize, accept);
    assert.equal(anonymous.statusCode, 401);
    assert.match(String(anonymous.headers['www-authenticate']), /^Bearer\b/);
    assert.deepEqual(Object.keys(anonymous.json()), ['message']);
    const wrong = await api(base, 'not-a-token').post('/api/mcp', initialize, accept);
    assert.equal(wrong.statusCode, 401);
    assert.match(String(wrong.headers['www-authenticate']), /^Bearer\b/);
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await api(base, owner).request(method, '/api/mcp');
      assert.equal(res.statusCode, 405, method);
      assert.equal(res.headers.allow, 'POST');
    }
    const ok = await api(base, owner).post('/api/mcp', initialize, accept);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().result.serverInfo.name, 'agent-platform');
  });

  it('answers only requests addressed to this server: another Host or Origin is 403 (DNS rebinding), PUBLIC_BASE_URL\'s host is answered', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const headers = { ...bearer(owner), accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const send = (app: typeof h.app, extra: Record<string, string>) => app.inject({ method: 'POST', url: '/api/mcp', headers: { ...headers, ...extra }, payload: initialize });
    const refused: Record<string, string>[] = [{ host: 'evil.example.com' }, { host: 'evil.example.com:3000' }, { host: 'localhost:3000', origin: 'http://evil.example.com' }, { host: 'localhost', origin: 'null' }];
    for (const extra of refused) {
      const res = await send(h.app, extra);
      assert.equal(res.statusCode, 403, JSON.stringify(extra));
      assert.match(res.json().message, /DNS rebinding protection/);
    }
    const answered: Record<string, string>[] = [{ host: 'localhost:3000' }, { host: '127.0.0.1:8080', origin: 'http://localhost:6274' }, { host: '[::1]:3000' }];
    for (const extra of answered) {
      assert.equal((await send(h.app, extra)).statusCode, 200, JSON.stringify(extra));
    }
    // A deployment behind its public name.
    const { app: deployed } = await startTestApp(suite, { PUBLIC_BASE_URL: 'https://agents.example.com', TEMPORAL_NAMESPACE: 'unused' });
    const user = await registerUser(deployed);
    const at = (extra: Record<string, string>) => deployed.inject({ method: 'POST', url: '/api/mcp', headers: { ...headers, ...bearer(user), ...extra }, payload: initialize });
    assert.equal((await at({ host: 'agents.example.com', origin: 'https://agents.example.com' })).statusCode, 200);
    assert.equal((await at({ host: 'other.example.com' })).statusCode, 403);
  });
});
