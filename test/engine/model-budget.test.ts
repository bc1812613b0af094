import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { startModelServer, textReply, toolCallsReply, type ModelServer } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';
import { createThreadMessagesRepository } from '../../db/repositories/thread-messages';

/** The daily budget of this file's accounts: 100 tokens (each account is a new user, so each has its own). */
const BUDGET = 100;
const ALLOWED = ['m-usage', 'm-budget', 'm-cross', 'm-trigger', 'm-tools', 'm-context', 'm-huge', 'm-fine', 'm-ok', 'm-allowed'];
const CONTEXT_MAX = 4096;

/**
 * Model use is metered and bounded (docs/api.md § Model use), through the whole engine against the
 * scripted provider: each run's usage, the account's usage per day, MODEL_TOKENS_PER_DAY (the API's 429,
 * a trigger's fire skipped, a run failing when it crosses it), MODEL_ALLOWED and MODEL_CONTEXT_MAX_BYTES.
 */
describe('model use is metered and bounded', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let models: ModelServer;

  before(async () => {
    models = await startModelServer(suite);
    h = await startEngine(suite, __filename, {
      MODEL_BASE_URL: models.baseUrl,
      MODEL_MAX_RETRIES: '0',
      MODEL_TOKENS_PER_DAY: String(BUDGET),
      MODEL_ALLOWED: ALLOWED.join(','),
      MODEL_CONTEXT_MAX_BYTES: String(CONTEXT_MAX),
      INITIAL_BALANCE: '100000',
    });
  });

  async function createAgent(user: TestUser, body: Record<string, unknown>): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: 'thinker', ...body } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  async function startRun(user: TestUser, agentId: string, payload: Record<string, unknown> = {}) {
    return h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs`, headers: user.auth, payload });
  }

  async function finished(user: TestUser, id: string) {
    return waitFor(`run ${id} to finish`, async () => {
      const r = (await h.app.inject({ method: 'GET', url: `/api/runs/${id}`, headers: user.auth })).json();
      return (r.status === 'succeeded' || r.status === 'failed') && r;
    }, 30_000);
  }

  async function run(user: TestUser, agentId: string, payload: Record<string, unknown> = {}) {
    const res = await startRun(user, agentId, payload);
    assert.equal(res.statusCode, 202, res.body);
    return finished(user, res.json().id);
  }

  const today = () => new Date().toISOString().slice(0, 10);
  const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

  it("stores each run's usage (tokens and tool calls) and adds it up per UTC day, every day of the range shown", async () => {
    const user = await registerUser(h.app);
    const service = await startReceiver(suite, () => ({ body: { ok: true } }));
    models.script('m-usage', (_call, n) =>
      n % 2 === 0 ? toolCallsReply([{ name: 'lookup', arguments: {} }], { prompt_tokens: 11, completion_tokens: 3 }) : textReply('done', { prompt_tokens: 13, completion_tokens: 2 }),
    );
    const agentId = await createAgent(user, { configJson: { model: 'm-usage' } });
    const tool = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/tools`, headers: user.auth, payload: { type: 'custom', name: 'lookup', configJson: { endpoint: `${service.url}/x` } } });
    assert.equal(tool.statusCode, 201, tool.body);

    const first = await run(user, agentId, { input: 'one' });
    assert.equal(first.status, 'succeeded', JSON.stringify(first));
    assert.deepEqual(first.usage, { promptTokens: 24, completionTokens: 5, toolCalls: 1 });
    const second = await run(user, agentId, { input: 'two' });
    assert.deepEqual(second.usage, { promptTokens: 24, completionTokens: 5, toolCalls: 1 });
    const listed = await h.app.inject({ method: 'GET', url: `/api/agents/${agentId}/runs`, headers: user.auth });
    assert.deepEqual(listed.json().map((r: { usage: unknown }) => r.usage), [second.usage, first.usage], 'run lists show it too');

    const usage = await h.app.inject({ method: 'GET', url: `/api/account/usage?from=${daysAgo(2)}&to=${today()}`, headers: user.auth });
    assert.equal(usage.statusCode, 200, usage.body);
    assert.deepEqual(usage.json(), [
      { date: daysAgo(2), runs: 0, promptTokens: 0, completionTokens: 0, toolCalls: 0 },
      { date: daysAgo(1), runs: 0, promptTokens: 0, completionTokens: 0, toolCalls: 0 },
      { date: today(), runs: 2, promptTokens: 48, completionTokens: 10, toolCalls: 2 },
    ]);
    // The default range: the last 30 days to today, oldest first.
    const defaults = (await h.app.inject({ method: 'GET', url: '/api/account/usage', headers: user.auth })).json();
    assert.equal(defaults.length, 30);
    assert.equal(defaults[0].date, daysAgo(29));
    assert.deepEqual(defaults.at(-1), { date: today(), runs: 2, promptTokens: 48, completionTokens: 10, toolCalls: 2 });
    // Another account's use is its own.
    const other = await registerUser(h.app);
    const theirs = (await h.app.inject({ method: 'GET', url: `/api/account/usage?from=${today()}&to=${today()}`, headers: other.auth })).json();
    assert.deepEqual(theirs, [{ date: today(), runs: 0, promptTokens: 0, completionTokens: 0, toolCalls: 0 }]);
  });

  it('refuses a usage range that is reversed, longer than 366 days, or not of dates, naming the rule', async () => {
    const user = await registerUser(h.app);
    const ask = (query: string) => h.app.inject({ method: 'GET', url: `/api/account/usage?${query}`, headers: user.auth });
    const cases: [string, RegExp][] = [
      ['from=2026-03-02&to=2026-03-01', /^querystring\.from: must not be after to/],
      ['from=2025-01-01&to=2026-01-02', /^querystring: from 2025-01-01 to 2026-01-02 is 367 days; at most 366 days per request$/],
      ['from=2026-02-30', /^querystring\.from: must be a calendar date written YYYY-MM-DD/],
      ['to=yesterday', /^querystring\.to: must be a calendar date written YYYY-MM-DD/],
      ['from=2026-01-01&extra=1', /^querystring/],
    ];
    for (const [query, message] of cases) {
      const res = await ask(query);
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
      assert.deepEqual(Object.keys(res.json()), ['message']);
      assert.match(res.json().message, message, query);
    }
    const year = await ask('from=2024-01-01&to=2024-12-31');
    assert.equal(year.statusCode, 200, '366 days (a leap year) is allowed');
    assert.equal(year.json().length, 366);
  });

  it('over MODEL_TOKENS_PER_DAY: POST …/runs answers 429 with Retry-After to the next UTC midnight, and writes nothing', async () => {
    const user = await registerUser(h.app);
    models.script('m-budget', () => textReply('spent', { prompt_tokens: 90, completion_tokens: 10 }));
    const agentId = await createAgent(user, { configJson: { model: 'm-budget' } });
    const spent = await run(user, agentId, { input: 'spend it' });
    assert.equal(spent.status, 'succeeded');

    const calls = models.callsFor('m-budget').length;
    const refused = await startRun(user, agentId, { input: 'more' });
    assert.equal(refused.statusCode, 429, refused.body);
    assert.match(refused.json().message, /^MODEL_TOKENS_PER_DAY reached: this account has used its 100 model tokens/);
    const retryAfter = Number(refused.headers['retry-after']);
    const now = new Date();
    const toMidnight = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
    assert.ok(retryAfter >= 1 && Math.abs(retryAfter - toMidnight) < 5, `Retry-After ${retryAfter}, midnight in ${toMidnight} s`);
    const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM runs WHERE agent_id = $1`, [agentId]);
    assert.equal(rows[0].n, 1, 'no run written');
    assert.equal(models.callsFor('m-budget').length, calls);

    // An agent on the tool executor (no model named, no MODEL_NAME) still runs.
    const tools = await createAgent(user, {});
    const toolRun = await run(user, tools);
    assert.equal(toolRun.status, 'succeeded');
    assert.equal(toolRun.executor, 'tools');
    // Another account has its own budget.
    const other = await registerUser(h.app);
    const theirs = await run(other, await createAgent(other, { configJson: { model: 'm-budget' } }), { input: 'mine' });
    assert.equal(theirs.status, 'succeeded');
  });

  it('a run that crosses the budget fails at its next model call, naming the budget; the call that crossed it was made', async () => {
    const user = await registerUser(h.app);
    const service = await startReceiver(suite, () => ({ body: { ok: true } }));
    models.script('m-cross', () => toolCallsReply([{ name: 'lookup', arguments: {} }], { prompt_tokens: 70, completion_tokens: 40 }));
    const agentId = await createAgent(user, { configJson: { model: 'm-cross', maxSteps: 5 } });
    await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/tools`, headers: user.auth, payload: { type: 'custom', name: 'lookup', configJson: { endpoint: `${service.url}/x` } } });
    const done = await run(user, agentId, { input: 'go' });
    assert.equal(done.status, 'failed');
    assert.match(done.error, /^MODEL_TOKENS_PER_DAY reached: this account has used its 100 model tokens \(prompt \+ completion\) for today \(UTC\)/);
    assert.equal(models.callsFor('m-cross').length, 1, 'the second model call was not made');
    assert.deepEqual(done.usage, { promptTokens: 70, completionTokens: 40, toolCalls: 1 });
    const day = (await h.app.inject({ method: 'GET', url: `/api/account/usage?from=${today()}&to=${today()}`, headers: user.auth })).json();
    assert.deepEqual(day, [{ date: today(), runs: 1, promptTokens: 70, completionTokens: 40, toolCalls: 1 }]);
  });

  it("a trigger's fire of a model agent over the budget is recorded skipped, reason model_tokens_per_day: not counted, no run", async () => {
    const user = await registerUser(h.app);
    models.script('m-trigger', () => textReply('ok', { prompt_tokens: 100, completion_tokens: 1 }));
    const agentId = await createAgent(user, { configJson: { model: 'm-trigger' } });
    const trigger = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/triggers`, headers: user.auth, payload: { type: 'webhook', name: 'hook' } });
    assert.equal(trigger.statusCode, 201, trigger.body);
    const triggerId = trigger.json().id;
    const fire = async () => {
      const res = await h.app.inject({ method: 'POST', url: `/api/triggers/${triggerId}/fire`, headers: user.auth, payload: { payload: { n: 1 } } });
      assert.equal(res.statusCode, 202, res.body);
      return res.json().fireId as string;
    };
    const firstFire = await fire();
    const firstRun = await waitFor('the first fire\'s run', async () => (await h.db.query(`SELECT run_id FROM fires WHERE id = $1`, [firstFire])).rows[0]?.run_id, 30_000);
    assert.equal((await finished(user, firstRun)).status, 'succeeded');

    const secondFire = await fire();
    const shown = (await h.app.inject({ method: 'GET', url: `/api/triggers/${triggerId}/fires/${secondFire}`, headers: user.auth })).json();
    assert.equal(shown.status, 'skipped');
    assert.equal(shown.reason, 'model_tokens_per_day');
    assert.equal(shown.runId, null);
    const listed = (await h.app.inject({ method: 'GET', url: `/api/triggers/${triggerId}/fires`, headers: user.auth })).json();
    assert.deepEqual(listed.map((f: { status: string; reason: string | null }) => [f.status, f.reason]), [['skipped', 'model_tokens_per_day'], ['succeeded', null]]);
    const t = (await h.app.inject({ method: 'GET', url: `/api/triggers/${triggerId}`, headers: user.auth })).json();
    assert.equal(t.fireCount, 1, 'the skipped fire is not counted');
  });

  it('MODEL_ALLOWED: a model outside it is refused on create, update and import, naming the field; a stored one no longer allowed fails its run', async () => {
    const user = await registerUser(h.app);
    const refused = await h.app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: 'x', configJson: { model: 'gpt-forbidden' } } });
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().message, `body.configJson.model: "gpt-forbidden" is not an allowed model (allowed: ${ALLOWED.join(', ')})`);
    const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM agents a JOIN accounts c ON c.id = a.account_id WHERE c.owner_user_id = $1`, [user.id]);
    assert.equal(rows[0].n, 0, 'nothing written, nothing charged');

    const agentId = await createAgent(user, { configJson: { model: 'm-allowed' } });
    const update = await h.app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: user.auth, payload: { configJson: { model: 'gpt-forbidden' } } });
    assert.equal(update.statusCode, 400);
    assert.match(update.json().message, /^body\.configJson\.model: "gpt-forbidden" is not an allowed model/);
    const unrelated = await h.app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: user.auth, payload: { name: 'renamed' } });
    assert.equal(unrelated.statusCode, 200);

    const exported = (await h.app.inject({ method: 'GET', url: `/api/agents/${agentId}/export`, headers: user.auth })).json();
    exported.agent.configJson.model = 'gpt-forbidden';
    const imported = await h.app.inject({ method: 'POST', url: '/api/agents/import', headers: user.auth, payload: exported });
    assert.equal(imported.statusCode, 400, imported.body);
    assert.match(imported.json().message, /^body\.agent\.configJson\.model: "gpt-forbidden" is not an allowed model/);

    // Stored before MODEL_ALLOWED changed: the run fails, and the model is not asked.
    await h.db.query(`UPDATE agents SET config_json = '{"model": "m-retired"}' WHERE id = $1`, [agentId]);
    models.script('m-retired', () => textReply('should not be asked'));
    const retired = await run(user, agentId, { input: 'hi' });
    assert.equal(retired.status, 'failed');
    assert.match(retired.error, /configJson\.model: "m-retired" is not an allowed model/);
    assert.equal(models.callsFor('m-retired').length, 0);
  });

  it('MODEL_CONTEXT_MAX_BYTES: older thread messages are left out first; a run whose system message and input alone exceed it fails naming it, sending nothing', async () => {
    const user = await registerUser(h.app);
    models.script('m-context', (_call, n) => textReply(`answer ${n} ${'x'.repeat(900)}`, { prompt_tokens: 1, completion_tokens: 1 }));
    const agentId = await createAgent(user, { systemPrompt: 'Be brief.', configJson: { model: 'm-context' } });
    for (let i = 0; i < 4; i++) {
      const r = await run(user, agentId, { input: `question ${i} ${'q'.repeat(300)}`, threadId: 'long' });
      assert.equal(r.status, 'succeeded', JSON.stringify(r));
    }
    const calls = models.callsFor('m-context');
    const last = calls.at(-1)!.body;
    const bytes = Buffer.byteLength(JSON.stringify(last));
    console.log(`the fourth run's request: ${bytes} bytes, ${last.messages.length} messages (the thread holds 6 before it)`);
    assert.ok(bytes <= CONTEXT_MAX, `${bytes} bytes`);
    assert.equal(last.messages[0]!.role, 'system', 'the system message stays');
    assert.match(last.messages.at(-1)!.content!, /^question 3 /, 'the input stays');
    const kept = last.messages.slice(1, -1).map((m) => m.content);
    assert.ok(kept.length < 6, `older thread messages were left out: ${kept.length} of 6 kept`);
    const thread = (await h.app.inject({ method: 'GET', url: `/api/agents/${agentId}/threads/long/messages`, headers: user.auth })).json();
    const before = thread.map((m: { content: string }) => m.content).reverse().slice(0, 6);
    assert.deepEqual(kept, before.slice(6 - kept.length), 'the ones kept are the newest, oldest first');

    // However long the thread, a run reads no more of it than the bound: 50 messages of 1 KiB, 4 KiB read.
    const run0 = await h.db.query(`SELECT id, account_id FROM runs WHERE agent_id = $1 LIMIT 1`, [agentId]);
    const { id: runId, account_id: accountId } = run0.rows[0];
    const threadMessages = createThreadMessagesRepository(h.db);
    await threadMessages.insertThreadMessages({
      accountId,
      agentId,
      threadId: 'huge',
      runId,
      messages: Array.from({ length: 50 }, (_, i) => ({ role: 'user' as const, content: `${String(i).padStart(2, '0')}${'m'.repeat(1022)}`, createdAt: new Date(Date.now() - (50 - i) * 1000) })),
    });
    const window = await threadMessages.listThreadWindow({ agentId, threadId: 'huge', maxMessages: 10_000, ttlMinutes: 60, maxBytes: CONTEXT_MAX });
    assert.deepEqual(window.map((m) => m.content.slice(0, 2)), ['46', '47', '48', '49'], 'the newest that fit in 4 KiB, oldest first');

    models.script('m-huge', () => textReply('should not be asked'));
    const huge = await createAgent(user, { systemPrompt: 'S'.repeat(CONTEXT_MAX), configJson: { model: 'm-huge' } });
    const failed = await run(user, huge, { input: 'hi' });
    assert.equal(failed.status, 'failed');
    assert.match(failed.error, /more than MODEL_CONTEXT_MAX_BYTES \(4096\)/);
    assert.equal(models.callsFor('m-huge').length, 0, 'nothing sent');
  });
});
