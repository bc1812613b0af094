import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { before, describe, it } from 'node:test';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Db } from '../../db/pool';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEverythingServer, startHttpServer, startOwnMcpServer, type RunningMcpServer } from '../helpers/mcp-servers';
import { joinWorkspace } from '../helpers/workspaces';

/**
 * Tool type `mcp` through the API (docs/api.md § MCP tools): its config under the custom tools' rules (address,
 * secrets, exports), and `GET /api/tools/:id/functions` against the reference server-everything on
 * loopback, servers of our own (pages, counted calls) and servers that misbehave (down, hanging, 50 MB).
 */
describe('MCP tools (docs/api.md § MCP tools)', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let everything: RunningMcpServer;
  let user: TestUser;
  let agentId: string;

  before(async () => {
    ({ app, db } = await startTestApp(suite, { TOOL_TIMEOUT_MS: '1500', MCP_LIST_TTL: '2s' }));
    everything = await startEverythingServer(suite);
    user = await registerUser(app);
    agentId = (await api(app, user).ok('POST', '/api/agents', { name: 'Host', status: 'template' })).id;
  });

  const addTool = async (configJson: Record<string, unknown>, name = 'everything', who: TestUser = user, agent = agentId) => {
    const res = await api(app, who).post(`/api/agents/${agent}/tools`, { type: 'mcp', name, configJson });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const functionsOf = (id: string, who: TestUser | Record<string, string> = user) =>
    'accessToken' in who ? api(app, who as TestUser).get(`/api/tools/${id}/functions`) : api(app, null).get(`/api/tools/${id}/functions`, who as Record<string, string>);

  it("lists the server's functions with their schemas, every one the reference server offers", async () => {
    const tool = await addTool({ url: everything.url });
    assert.deepEqual(tool.configJson, { url: everything.url, headers: {} });
    const res = await functionsOf(tool.id);
    assert.equal(res.statusCode, 200, res.body);
    const functions = res.json<{ name: string; description: string; inputSchema: { type: string; properties: Record<string, unknown>; required?: string[] } }[]>();
    const names = functions.map((f) => f.name);
    for (const name of ['echo', 'get-sum', 'get-structured-content', 'trigger-long-running-operation']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    const echo = functions.find((f) => f.name === 'echo')!;
    assert.equal(echo.description, 'Echoes back the input string');
    assert.deepEqual(echo.inputSchema.properties, { message: { type: 'string', description: 'Message to echo' } });
    assert.deepEqual(echo.inputSchema.required, ['message']);
    const sum = functions.find((f) => f.name === 'get-sum')!;
    assert.deepEqual(Object.keys(sum.inputSchema.properties), ['a', 'b']);
    assert.equal(sum.inputSchema.type, 'object');
  });

  it('offers only the allow-list, in the order the server lists them', async () => {
    const tool = await addTool({ url: everything.url, functions: ['get-sum', 'echo', 'not-there'] });
    const res = await functionsOf(tool.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().map((f: { name: string }) => f.name), ['echo', 'get-sum']);
  });

  it('reads every page of tools/list, keeps the list for MCP_LIST_TTL per tool, and lists again after an edit or once it is older', async () => {
    const pages: Record<string, { tools: { name: string; description: string; inputSchema: { type: 'object' } }[]; nextCursor?: string }> = {
      first: { tools: [{ name: 'a', description: 'A', inputSchema: { type: 'object' } }], nextCursor: 'p2' },
      p2: { tools: [{ name: 'b', description: 'B', inputSchema: { type: 'object' } }], nextCursor: 'p3' },
      p3: { tools: [{ name: 'c', description: 'C', inputSchema: { type: 'object' } }] },
    };
    const own = await startOwnMcpServer(suite, (server) => server.setRequestHandler(ListToolsRequestSchema, (req) => pages[req.params?.cursor ?? 'first']!));
    const tool = await addTool({ url: own.url }, 'paged');
    const first = await functionsOf(tool.id);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json().map((f: { name: string }) => f.name), ['a', 'b', 'c']);
    assert.equal(own.calls.get('tools/list'), 3, 'three pages');
    assert.equal((await functionsOf(tool.id)).statusCode, 200);
    assert.equal(own.calls.get('tools/list'), 3, 'the second read is the kept list');

    // Another header is another listing (the list depends on what is sent).
    const edited = await api(app, user).patch(`/api/tools/${tool.id}`, { configJson: { headers: { 'X-Tenant': 'acme' } } });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.equal((await functionsOf(tool.id)).statusCode, 200);
    assert.equal(own.calls.get('tools/list'), 6);

    await sleep(2100); // MCP_LIST_TTL is 2s here
    assert.equal((await functionsOf(tool.id)).statusCode, 200);
    assert.equal(own.calls.get('tools/list'), 9, 'listed again once older than MCP_LIST_TTL');
  });

  it('answers 502 naming what went wrong: not reachable, refused to initialize, protocol error, timed out, too large', async () => {
    const down = await startHttpServer(suite, () => {});
    await down.stop(); // a port nothing listens on any more
    const hanging = await startHttpServer(suite, () => {}); // takes the request, never answers
    const notMcp = await startHttpServer(suite, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}'));
    const refuses = await startHttpServer(suite, (_req, res) => res.writeHead(401, { 'content-type': 'text/plain' }).end('bad token'));
    let sent = 0;
    const huge = await startHttpServer(suite, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const write = () => {
        while (sent < 50 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', write);
        }
        res.end();
      };
      write();
    });
    const cases: [string, RegExp][] = [
      [down.url, /^the MCP server could not be reached: ECONNREFUSED/],
      [refuses.url, /^the MCP server refused to initialize: HTTP 401: bad token$/],
      [notMcp.url, /^the MCP server answered with a protocol error: /],
      [hanging.url, /^the MCP server did not answer within 1500 ms \(TOOL_TIMEOUT_MS\)$/],
      [huge.url, /^the MCP server's answer is larger than 1 MiB/],
    ];
    for (const [url, message] of cases) {
      const tool = await addTool({ url }, 'broken');
      const started = Date.now();
      const res = await functionsOf(tool.id);
      assert.equal(res.statusCode, 502, `${url}: ${res.body}`);
      assert.deepEqual(Object.keys(res.json()), ['message']);
      assert.match(res.json().message, message);
      assert.ok(Date.now() - started < 5_000, `${url} answered within TOOL_TIMEOUT_MS and a little`);
    }
    assert.ok(sent < 20 * 1024 * 1024, `the 50 MB answer was not read to its end (${sent} bytes sent before the client stopped)`);
  });

  it('refuses what the custom tools refuse: credentials in the URL, the transport\'s own headers, private targets unless allowed', async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ url: 'https://user:pass@mcp.example.com/mcp' }, /^body\.configJson\.url: must not contain credentials/],
      [{ url: 'ftp://mcp.example.com/mcp' }, /^body\.configJson\.url: must be an absolute http or https URL/],
      [{ url: everything.url, headers: { 'Mcp-Session-Id': 'x' } }, /^body\.configJson\.headers: must not set .*mcp-session-id/],
      [{ url: everything.url, functions: ['echo', 'echo'] }, /^body\.configJson\.functions: names the same function twice/],
      [{ url: everything.url, extra: 1 }, /^body\.configJson/],
    ];
    for (const [configJson, message] of bad) {
      const res = await api(app, user).post(`/api/agents/${agentId}/tools`, { type: 'mcp', name: 'bad', configJson });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().message, message);
    }
    const { app: strict, db: strictDb } = await startTestApp(suite, { ALLOW_PRIVATE_TARGETS: 'false' });
    const owner = await registerUser(strict);
    const agent = (await api(strict, owner).ok('POST', '/api/agents', { name: 'Host', status: 'template' })).id;
    for (const url of [everything.url, 'http://localhost:9/mcp', 'http://10.0.0.1/mcp']) {
      const res = await api(strict, owner).post(`/api/agents/${agent}/tools`, { type: 'mcp', name: 'private', configJson: { url } });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().message, /^body\.configJson\.url: must not point at a (private, )?loopback/);
    }
    // Checked again when the server is asked, not only when the URL is written: a tool stored while
    // private targets were allowed (here, written past the API) is refused at connect time.
    const { rows } = await strictDb.query<{ id: string }>(
      `INSERT INTO tools (account_id, agent_id, type, name, config_json) SELECT account_id, id, 'mcp', 'stored', $2 FROM agents WHERE id = $1 RETURNING id`,
      [agent, JSON.stringify({ url: everything.url, headers: {} })],
    );
    const listed = await api(strict, owner).get(`/api/tools/${rows[0]!.id}/functions`);
    assert.equal(listed.statusCode, 502, listed.body);
    assert.match(listed.json().message, /^the MCP server could not be reached: target not allowed: must not point at a private, loopback or link-local address \(127\.0\.0\.1\)$/);
  });

  it('keeps header values and secret query values write-only: masked on read, absent from exports, required again when the url changes', async () => {
    const tool = await addTool({ url: `${everything.url}?api_key=k-123456`, headers: { Authorization: 'Bearer mcp-secret-9876', 'User-Agent': 'tests' } });
    assert.equal(tool.configJson.headers.Authorization, 'Bearer mcp-secret-9876', 'shown in full once, to the request that set it');
    const read = (await api(app, user).ok('GET', `/api/tools/${tool.id}`)).configJson;
    assert.deepEqual(read.headers, { Authorization: '••••9876', 'User-Agent': 'tests' });
    assert.match(read.url, /api_key=(%E2%80%A2|•){4}3456/);
    const { rows } = await db.query<{ config_json: { headers: Record<string, string> } }>('SELECT config_json FROM tools WHERE id = $1', [tool.id]);
    assert.ok(!JSON.stringify(rows[0]!.config_json).includes('mcp-secret-9876'), 'sealed at rest');
    // The list still works with the header opened (the server ignores it).
    assert.equal((await functionsOf(tool.id)).statusCode, 200);

    const exported = await api(app, user).ok('GET', `/api/agents/${agentId}/export`);
    const mine = exported.tools.find((t: { name: string; configJson: { url: string } }) => t.configJson.url?.startsWith(everything.url) && t.configJson.url.includes('api_key'));
    assert.deepEqual(mine.configJson.headers, { 'User-Agent': 'tests' });
    assert.ok(!JSON.stringify(mine).includes('k-123456') && !JSON.stringify(mine).includes('9876'), JSON.stringify(mine));
    assert.deepEqual(mine.secrets, ['headers.Authorization', 'url?api_key']);

    const moved = await api(app, user).patch(`/api/tools/${tool.id}`, { configJson: { url: `${everything.url.replace('/mcp', '/other')}?api_key=k-123456` } });
    assert.equal(moved.statusCode, 400, moved.body);
    assert.match(moved.json().message, /headers\.Authorization.*the url changed/);
    const again = await api(app, user).patch(`/api/tools/${tool.id}`, { configJson: { url: everything.url, headers: { Authorization: 'Bearer new-one-1111' } } });
    assert.equal(again.statusCode, 200, again.body);
  });

  it('lists for every role that may read, in its own account and a joined one; another account\'s tool is 404', async () => {
    const tool = await addTool({ url: everything.url, functions: ['echo'] });
    const viewer = await joinWorkspace(app, user, 'viewer');
    const res = await functionsOf(tool.id, viewer.headers);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().map((f: { name: string }) => f.name), ['echo']);
    const stranger = await registerUser(app);
    assert.equal((await functionsOf(tool.id, stranger)).statusCode, 404);
  });

  it("gives the other types' one function, as a model run offers it", async () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } } };
    const res = await api(app, user).post(`/api/agents/${agentId}/tools`, {
      type: 'custom', name: 'Weather now', description: 'The weather', configJson: { endpoint: 'http://93.184.215.14/w', parameters },
    });
    const functions = await api(app, user).ok('GET', `/api/tools/${res.json().id}/functions`);
    assert.deepEqual(functions, [{ name: 'Weather_now', description: 'The weather', inputSchema: parameters }]);
  });

  it('lets one account wait on at most 8 listings at once (429 with Retry-After beyond)', async () => {
    const hanging = await startHttpServer(suite, () => {});
    const tool = await addTool({ url: hanging.url }, 'slow');
    const answers = await Promise.all(Array.from({ length: 9 }, () => functionsOf(tool.id)));
    const statuses = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [429, 502, 502, 502, 502, 502, 502, 502, 502], answers.map((r) => r.body).join('\n'));
    const busy = answers.find((r) => r.statusCode === 429)!;
    assert.ok(Number(busy.headers['retry-after']) > 0);
    // Another account is not held up by this one's waits.
    const other = await registerUser(app);
    const agent = (await api(app, other).ok('POST', '/api/agents', { name: 'Other', status: 'template' })).id;
    const theirs = await addTool({ url: everything.url, functions: ['echo'] }, 'theirs', other, agent);
    assert.equal((await functionsOf(theirs.id, other)).statusCode, 200);
  });
});
