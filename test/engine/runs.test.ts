import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { createRunActivities } from '../../engine/runs';
import { api } from '../helpers/api';
import { readAllPages, registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { fakeUsdPrice, startDataFixtures } from '../helpers/data-fixtures';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';

/** Runs through the whole engine: API → outbox → run workflow → executor → tools on loopback → event. */
describe('agent runs', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let data: Awaited<ReturnType<typeof startDataFixtures>>;
  let service: Receiver;
  let user: TestUser;

  before(async () => {
    data = await startDataFixtures(suite);
    // A custom tool's endpoint: echoes what it got, fails on /fail.
    service = await startReceiver(suite, (req) => {
      if (req.url === '/fail') return { status: 500, body: 'upstream broke' };
      if (req.url === '/slow') return { body: { slow: true }, delayMs: 2_500 };
      const big = /^\/big\?kib=(\d+)$/.exec(req.url);
      if (big) return { body: { blob: 'x'.repeat(Number(big[1]) * 1024) } };
      // Hangs the first time (the worker is stopped meanwhile), answers at once after that.
      if (req.url === '/gate') return { body: { gate: 'open' }, delayMs: service.requests.filter((r) => r.url === '/gate').length === 1 ? 60_000 : 0 };
      return { body: { data: { echo: JSON.parse(req.body || 'null'), items: ['first', 'second'], label: 'fixture' } } };
    });
    h = await startEngine(suite, __filename, data.env);
    user = await registerUser(h.app);
  });

  async function createAgent(u: TestUser, name: string, status?: string): Promise<string> {
    const res = await api(h.app, u).post('/api/agents', { name, ...(status ? { status } : {}) });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  async function addTool(agentId: string, tool: Record<string, unknown>): Promise<void> {
    const res = await api(h.app, user).post(`/api/agents/${agentId}/tools`, tool);
    assert.equal(res.statusCode, 201, res.body);
  }

  async function startRun(agentId: string, payload?: Record<string, unknown>) {
    const res = await api(h.app, user).post(`/api/agents/${agentId}/runs`, payload);
    assert.equal(res.statusCode, 202, res.body);
    return res.json();
  }

  async function finished(runId: string) {
    return waitFor(`run ${runId} to finish`, async () => {
      const res = await api(h.app, user).get(`/api/runs/${runId}`);
      const run = res.json();
      return (run.status === 'succeeded' || run.status === 'failed') && run;
    }, 30_000);
  }

  async function eventsOf(runId: string) {
    const { rows } = await h.db.query(`SELECT type, data, chain_depth FROM events WHERE data ->> 'runId' = $1 ORDER BY created_at`, [runId]);
    return rows as { type: string; data: Record<string, unknown>; chain_depth: number }[];
  }

  it('calls a custom tool with the filled bodyTemplate and its secret header, maps the response, emits agent.completed', async () => {
    const agentId = await createAgent(user, 'custom');
    await addTool(agentId, {
      type: 'custom',
      name: 'lookup',
      configJson: {
        endpoint: `${service.url}/lookup`,
        method: 'POST',
        headers: { Authorization: 'Bearer sk-live-0123456789', 'X-Plain': 'plain' },
        bodyTemplate: '{"query": {{input.query}}, "n": {{ input.nested.n }}, "all": {{input}}, "missing": {{input.nope}}, "keep": "{{other}}"}',
        responseMapping: { echoed: 'data.echo.query', second: 'data.items.1', absent: 'data.nope' },
      },
    });
    const input = { query: 'say "hi"', nested: { n: 7 } };
    const queued = await startRun(agentId, { input });
    assert.equal(queued.status, 'queued');
    assert.deepEqual(queued.input, input);
    assert.equal(queued.chainDepth, 0);
    assert.equal(queued.triggerId, null);

    const run = await finished(queued.id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.equal(run.error, null);
    assert.ok(run.startedAt && run.finishedAt);

    const call = service.requests.find((r) => r.url === '/lookup');
    assert.ok(call, 'the endpoint was called');
    assert.equal(call.method, 'POST');
    assert.equal(call.headers.authorization, 'Bearer sk-live-0123456789', 'the stored (sealed) secret header is sent in plaintext');
    assert.equal(call.headers['x-plain'], 'plain');
    assert.equal(call.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(call.body), { query: 'say "hi"', n: 7, all: input, missing: null, keep: '{{other}}' });

    const tool = run.output.tools.lookup;
    assert.equal(tool.type, 'custom');
    assert.equal(tool.ok, true);
    assert.deepEqual(tool.result, { echoed: 'say "hi"', second: 'second', absent: null });
    assert.deepEqual(run.output.input, input);
    assert.equal(run.output.summary, '1 of 1 tools succeeded');

    const events = await eventsOf(run.id);
    const completed = events.filter((e) => e.type === 'agent.completed');
    assert.equal(completed.length, 1);
    assert.equal(completed[0]!.chain_depth, 0);
    assert.deepEqual(completed[0]!.data, { agentId, runId: run.id, output: run.output, chainDepth: 0 });
  });

  it('calls the data tools at their configured base URLs and records a failing tool as ok: false', async () => {
    const agentId = await createAgent(user, 'data');
    await addTool(agentId, { type: 'coin_prices', name: 'prices', configJson: { coinIds: ['bitcoin', 'ethereum'] } });
    await addTool(agentId, { type: 'dex_pairs', name: 'pairs', configJson: { chainIds: ['solana', 'base'], pairAddresses: ['0xabc', '0xdef'] } });
    await addTool(agentId, { type: 'prediction_markets', name: 'markets', configJson: { marketIds: ['12', '34'] } });
    await addTool(agentId, { type: 'custom', name: 'broken', configJson: { endpoint: `${service.url}/fail`, method: 'GET' } });
    await addTool(agentId, { type: 'custom', name: 'off', enabled: false, configJson: { endpoint: `${service.url}/off`, method: 'GET' } });

    const run = await finished((await startRun(agentId, { input: { any: 1 } })).id);
    assert.equal(run.status, 'succeeded', 'one failing tool does not fail the run');
    const { tools } = run.output;
    // Stored as jsonb, whose objects keep no key order.
    assert.deepEqual(Object.keys(tools).sort(), ['broken', 'markets', 'pairs', 'prices'], 'enabled tools only');

    assert.deepEqual(tools.prices, {
      type: 'coin_prices', ok: true, durationMs: tools.prices.durationMs,
      result: { bitcoin: { usd: fakeUsdPrice('bitcoin') }, ethereum: { usd: fakeUsdPrice('ethereum') } },
    });
    const coinCall = new URL(data.coinGecko.requests.at(-1)!.url, 'http://x');
    assert.equal(coinCall.searchParams.get('ids'), 'bitcoin,ethereum');
    assert.equal(coinCall.searchParams.get('vs_currencies'), 'usd');

    assert.equal(tools.pairs.ok, true);
    assert.deepEqual(Object.keys(tools.pairs.result).sort(), ['base', 'solana']);
    assert.deepEqual(tools.pairs.result.base.pairs.map((p: { pairAddress: string }) => p.pairAddress), ['0xabc', '0xdef']);
    assert.deepEqual(data.dexScreener.requests.map((r) => r.url).slice(-2), ['/latest/dex/pairs/solana/0xabc,0xdef', '/latest/dex/pairs/base/0xabc,0xdef']);

    assert.equal(tools.markets.ok, true);
    assert.deepEqual(tools.markets.result.map((m: { id: string }) => m.id), ['12', '34']);
    assert.equal(data.polymarket.requests.at(-1)!.url, '/markets?id=12&id=34');

    assert.equal(tools.broken.ok, false);
    assert.match(tools.broken.error, /HTTP 500: upstream broke/);
    assert.equal(service.requests.some((r) => r.url === '/off'), false, 'a disabled tool is not called');
    assert.equal(run.output.summary, '3 of 4 tools succeeded');

    // One step per tool call, in the order they were made, paged by position.
    const steps = await readAllPages(h.app, user, `/api/runs/${run.id}/steps?limit=3`);
    assert.deepEqual(steps.sizes, [3, 1]);
    const all = steps.items as unknown as { index: number; type: string; name: string; toolId: string; input: unknown; output: unknown; error: string | null; usage: unknown; startedAt: string; finishedAt: string }[];
    assert.deepEqual(all.map((st) => [st.index, st.type, st.name]), [[0, 'tool', 'prices'], [1, 'tool', 'pairs'], [2, 'tool', 'markets'], [3, 'tool', 'broken']]);
    const toolRows = (await api(h.app, user).get(`/api/agents/${agentId}/tools`)).json() as { id: string; name: string }[];
    for (const st of all) {
      assert.equal(st.toolId, toolRows.find((t) => t.name === st.name)!.id);
      assert.equal(st.input, null, 'the default executor\'s steps take the run input');
      assert.equal(st.usage, null);
      assert.ok(Date.parse(st.startedAt) <= Date.parse(st.finishedAt));
    }
    assert.deepEqual(all[0]!.output, tools.prices.result);
    assert.equal(all[0]!.error, null);
    assert.equal(all[3]!.output, null);
    assert.match(all[3]!.error!, /HTTP 500: upstream broke/);
    const bad = await api(h.app, user).get(`/api/runs/${run.id}/steps?cursor=WyJ4Il0`);
    assert.equal(bad.statusCode, 400, bad.body);
    assert.deepEqual(bad.json(), { message: 'querystring.cursor: is not a valid cursor' });
  });

  it('fails the run when every tool fails: agent.failed with the error and chainDepth', async () => {
    const agentId = await createAgent(user, 'failing');
    await addTool(agentId, { type: 'custom', name: 'broken', configJson: { endpoint: `${service.url}/fail`, method: 'POST', bodyTemplate: 'plain {{input}}' } });
    await addTool(agentId, { type: 'dex_pairs', name: 'nothing', configJson: { chainIds: ['solana'] } });

    const run = await finished((await startRun(agentId, { input: 'x' })).id);
    assert.equal(run.status, 'failed');
    assert.match(run.error, /every tool failed/);
    assert.match(run.error, /broken: HTTP 500/);
    assert.equal(run.output.tools.broken.ok, false);
    assert.equal(run.output.tools.nothing.ok, false);
    const call = service.requests.filter((r) => r.url === '/fail').at(-1)!;
    assert.equal(call.body, 'plain "x"');
    assert.match(String(call.headers['content-type']), /^text\/plain/);

    const events = await eventsOf(run.id);
    assert.deepEqual(events.map((e) => e.type).filter((t) => t.startsWith('agent.')), ['agent.failed']);
    assert.deepEqual(events[0]!.data, { agentId, runId: run.id, error: run.error, chainDepth: 0 });
  });

  it('succeeds with no tools; a retried activity does not finish or emit twice', async () => {
    const agentId = await createAgent(user, 'empty');
    const run = await finished((await startRun(agentId)).id); // no body at all
    assert.equal(run.status, 'succeeded');
    assert.equal(run.input, null);
    assert.deepEqual(run.output, { input: null, tools: {}, summary: 'no enabled tools' });

    // What Temporal's retries of attempts whose answers were lost would do.
    const activities = createRunActivities(h.activityDeps());
    assert.deepEqual(await activities.beginRun({ runId: run.id }), { status: 'succeeded' });
    assert.deepEqual(await activities.beginRunStep({ runId: run.id, timeoutMs: 60_000 }), { begun: { status: 'succeeded' } });
    assert.deepEqual(await activities.finishRun({ runId: run.id }), { status: 'succeeded' });
    assert.deepEqual(await activities.finishRun({ runId: run.id, timedOut: true }), { status: 'succeeded' });
    assert.equal((await eventsOf(run.id)).filter((e) => e.type === 'agent.completed').length, 1);
    const again = (await api(h.app, user).get(`/api/runs/${run.id}`)).json();
    assert.equal(again.finishedAt, run.finishedAt);
    assert.deepEqual(again.output, run.output);
    const gone = '00000000-0000-4000-8000-000000000000';
    assert.deepEqual(await activities.beginRun({ runId: gone }), { status: 'gone' });
    assert.deepEqual(await activities.beginRunStep({ runId: gone, timeoutMs: 60_000 }), { begun: { status: 'gone' } });
    assert.deepEqual(await activities.runToolStep({ runId: gone, index: 0, type: 'tool' }), { status: 'stopped' });
    assert.deepEqual(await activities.finishRun({ runId: gone }), { status: 'gone' });
    const steps = await api(h.app, user).get(`/api/runs/${run.id}/steps`);
    assert.equal(steps.statusCode, 200, steps.body);
    assert.deepEqual(steps.json(), []);
  });

  it('a step heartbeats while its call runs, the first time a second after it began (a quick step sends none)', async () => {
    const agentId = await createAgent(user, 'slow');
    await addTool(agentId, { type: 'custom', name: 'slow', configJson: { endpoint: `${service.url}/slow`, method: 'GET' } });
    const queued = await startRun(agentId);
    const handle = h.activityDeps().client.workflow.getHandle(`run:${queued.id}`);
    const pendingStep = async () => {
      const [step] = (await handle.describe()).raw.pendingActivities ?? [];
      assert.ok(step, 'the step is in flight');
      return { startedMs: optionalTsToMs(step.lastStartedTime)!, beatMs: optionalTsToMs(step.lastHeartbeatTime), askedMs: Date.now() };
    };
    await waitFor('the slow call in flight', async () => service.requests.some((r) => r.url === '/slow'), 30_000);
    const early = await pendingStep();
    // Asked well inside the first second of the attempt (else this machine was too slow to tell anything):
    // no heartbeat yet. A step that heartbeat as its call began would show one here.
    if (early.askedMs - early.startedMs < 800) assert.equal(early.beatMs, undefined, `a heartbeat ${early.beatMs! - early.startedMs} ms into the attempt`);
    const beat = await waitFor('a heartbeat', async () => (await pendingStep()).beatMs, 5_000);
    assert.ok(beat - early.startedMs >= 900, `the first heartbeat came ${beat - early.startedMs} ms after the attempt began`);
    const run = await finished(queued.id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual(run.output.tools.slow.result, { slow: true });
  });

  it('a worker stopped after a tool call returned: on restart the run resumes and that tool is not called again', async () => {
    const agentId = await createAgent(user, 'resumes');
    await addTool(agentId, { type: 'custom', name: 'first', configJson: { endpoint: `${service.url}/first`, method: 'POST', bodyTemplate: '{{input}}' } });
    await addTool(agentId, { type: 'custom', name: 'second', configJson: { endpoint: `${service.url}/gate`, method: 'GET' } });
    const queued = await startRun(agentId, { input: { n: 1 } });

    await waitFor('the second tool call in flight', async () => service.requests.some((r) => r.url === '/gate'), 30_000);
    const { rows: before } = await h.db.query(`SELECT step_index, finished_at FROM run_steps WHERE run_id = $1 ORDER BY step_index`, [queued.id]);
    assert.ok(before[0].finished_at, 'the first step returned and was recorded');
    assert.equal(before[1].finished_at, null);
    await h.stopWorker(); // its in-flight step is cancelled: the request is torn down and the step retried later
    assert.equal(service.requests.find((r) => r.url === '/gate')!.aborted, true, 'the hanging request was aborted');
    // A retry of the first step's activity (its completion lost with the worker) answers what it recorded.
    const activities = createRunActivities(h.activityDeps());
    assert.deepEqual(await activities.runToolStep({ runId: queued.id, index: 0, type: 'tool' }), { status: 'done', ok: true });
    assert.equal(service.requests.filter((r) => r.url === '/first').length, 1);
    await h.startWorker();

    const run = await finished(queued.id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.equal(service.requests.filter((r) => r.url === '/first').length, 1, 'the tool call that returned was not made again');
    assert.equal(service.requests.filter((r) => r.url === '/gate').length, 2, 'the call that never returned was made again');
    assert.deepEqual(run.output.tools.first.result, { data: { echo: { n: 1 }, items: ['first', 'second'], label: 'fixture' } });
    assert.deepEqual(run.output.tools.second.result, { gate: 'open' });
    assert.equal((await eventsOf(run.id)).filter((e) => e.type === 'agent.completed').length, 1);
    // The last step ended the run; a retry of it (its answer lost) calls nothing and ends nothing again.
    assert.deepEqual(await activities.runToolStep({ runId: queued.id, index: 1, type: 'tool' }), { status: 'stopped' });
    assert.equal(service.requests.filter((r) => r.url === '/gate').length, 2);
    assert.equal((await eventsOf(run.id)).filter((e) => e.type === 'agent.completed').length, 1);
  });

  it('stores at most 256 KiB: a step over it keeps a marker, the run output gives up its largest results until it fits', async () => {
    const owner = await registerUser(h.app);
    const res = await api(h.app, owner).post('/api/agents', { name: 'big' });
    const agentId = res.json().id;
    for (const [name, kib] of [['a', 40], ['b', 150], ['c', 60], ['huge', 300]] as const) {
      const tool = await api(h.app, owner).post(`/api/agents/${agentId}/tools`, { type: 'custom', name, configJson: { endpoint: `${service.url}/big?kib=${kib}`, method: 'GET' } });
      assert.equal(tool.statusCode, 201, tool.body);
    }
    const queued = await api(h.app, owner).post(`/api/agents/${agentId}/runs`, { input: 'x'.repeat(60_000) });
    const runId = queued.json().id;
    const run = await waitFor('the big run to finish', async () => {
      const r = (await api(h.app, owner).get(`/api/runs/${runId}`)).json();
      return r.status !== 'queued' && r.status !== 'running' && r;
    }, 30_000);
    assert.equal(run.status, 'succeeded');
    const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
    assert.ok(bytes(run.output) <= 256 * 1024, `output is ${bytes(run.output)} bytes`);
    const { tools } = run.output;
    // huge: the endpoint's 300 KiB are read up to 256 KiB (no longer JSON: kept as text), over the step bound.
    assert.equal(tools.huge.ok, true);
    assert.equal(tools.huge.result.truncated, true);
    assert.ok(tools.huge.result.bytes > 256 * 1024);
    assert.deepEqual(tools.b.result, { truncated: true, bytes: bytes({ blob: 'x'.repeat(150 * 1024) }) }, 'the largest result gave way');
    assert.equal(tools.c.result.blob.length, 60 * 1024, 'the others fit once it did');
    assert.equal(tools.a.result.blob.length, 40 * 1024);
    assert.equal(run.output.input.length, 60_000);
    const steps = (await api(h.app, owner).get(`/api/runs/${runId}/steps`)).json();
    assert.equal(steps.find((st: { name: string }) => st.name === 'b').output.blob.length, 150 * 1024, 'each step keeps its own result');
    assert.equal(steps.find((st: { name: string }) => st.name === 'huge').output.truncated, true);
    const completed = (await eventsOf(runId)).find((e) => e.type === 'agent.completed')!;
    assert.deepEqual(completed.data.output, run.output);
  });

  it('a run whose activity failed for good is failed by the workflow (failRun), once', async () => {
    const agentId = await createAgent(user, 'stuck');
    const activities = createRunActivities(h.activityDeps());
    // A run left `running` by attempts that all died.
    const { rows } = await h.db.query(
      `INSERT INTO runs (account_id, agent_id, status, chain_depth) SELECT account_id, id, 'running', 2 FROM agents WHERE id = $1 RETURNING id`,
      [agentId],
    );
    const runId = rows[0].id as string;
    assert.deepEqual(await activities.failRun({ runId, error: 'the run could not be executed: database down' }), { status: 'failed' });
    assert.deepEqual(await activities.failRun({ runId, error: 'again' }), { status: 'failed' });
    const run = (await api(h.app, user).get(`/api/runs/${runId}`)).json();
    assert.equal(run.status, 'failed');
    assert.equal(run.error, 'the run could not be executed: database down');
    const failed = (await eventsOf(runId)).filter((e) => e.type === 'agent.failed');
    assert.equal(failed.length, 1, 'agent.failed once');
    assert.deepEqual(failed[0]!.data, { agentId, runId, error: run.error, chainDepth: 2 });
  });

  it('validates input, refuses templates, hides other accounts, lists newest first in pages', async () => {
    const agentId = await createAgent(user, 'api');
    const big = await api(h.app, user).post(`/api/agents/${agentId}/runs`, { input: 'x'.repeat(70_000) });
    assert.equal(big.statusCode, 400, big.body);
    assert.match(big.json().message, /input/);
    const extra = await api(h.app, user).post(`/api/agents/${agentId}/runs`, { input: 1, other: 2 });
    assert.equal(extra.statusCode, 400, extra.body);

    for (const status of ['template', 'paused']) {
      const agent = await createAgent(user, status, status);
      const refused = await api(h.app, user).post(`/api/agents/${agent}/runs`, {});
      assert.equal(refused.statusCode, 409, refused.body);
      assert.deepEqual(Object.keys(refused.json()), ['message']);
      assert.match(refused.json().message, new RegExp(`^Agent is (a )?${status}:`));
    }
    const { rows: none } = await h.db.query(`SELECT count(*)::int AS n FROM runs r JOIN agents a ON a.id = r.agent_id WHERE a.status IN ('template', 'paused')`);
    assert.equal(none[0].n, 0, 'nothing was queued');

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await startRun(agentId, { input: { i } })).id);
    const all = await readAllPages(h.app, user, `/api/agents/${agentId}/runs?limit=2`);
    assert.deepEqual(all.ids, [...ids].reverse());
    assert.deepEqual(all.sizes, [2, 1]);

    const other = await registerUser(h.app);
    for (const url of [`/api/runs/${ids[0]}`, `/api/agents/${agentId}/runs`, '/api/runs/not-a-uuid']) {
      const res = await api(h.app, other).get(url);
      assert.equal(res.statusCode, 404, `${url}: ${res.body}`);
      assert.deepEqual(Object.keys(res.json()), ['message']);
    }
    const post = await api(h.app, other).post(`/api/agents/${agentId}/runs`, {});
    assert.equal(post.statusCode, 404);
    const anonymous = await api(h.app).get(`/api/runs/${ids[0]}`);
    assert.equal(anonymous.statusCode, 401);
    await Promise.all(ids.map(finished));
  });
});
