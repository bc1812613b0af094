import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { readAllPages, registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { errorReply, startModelServer, textReply, toolCallsReply, type ModelServer } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { joinWorkspace } from '../helpers/workspaces';

/**
 * Rerun from a step and replay (docs/api.md § Rerun and replay), through the whole engine: the API writes the
 * rerun with its copied steps, the run workflow makes the rest against a scripted model provider and a loopback
 * tool endpoint, and a replay's workflow starts its reruns batch by batch.
 */
describe('reruns and replays', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let models: ModelServer;
  let service: Receiver;
  let user: TestUser;

  before(async () => {
    models = await startModelServer(suite);
    service = await startReceiver(suite, () => ({ body: { plan: 'gold' } }));
    h = await startEngine(suite, __filename, { MODEL_BASE_URL: models.baseUrl, MODEL_API_KEY: 'sk-test', MODEL_MAX_RETRIES: '0', INITIAL_BALANCE: '100000' });
    user = await registerUser(h.app);
  });

  async function createAgent(model: string, u = user): Promise<string> {
    const res = await h.app.inject({ method: 'POST', url: '/api/agents', headers: u.auth, payload: { name: 'thinker', configJson: { model } } });
    assert.equal(res.statusCode, 201, res.body);
    const agentId = res.json().id as string;
    const tool = await h.app.inject({
      method: 'POST',
      url: `/api/agents/${agentId}/tools`,
      headers: u.auth,
      payload: { type: 'custom', name: 'lookup', configJson: { endpoint: `${service.url}/customers`, method: 'POST', bodyTemplate: '{{input}}' } },
    });
    assert.equal(tool.statusCode, 201, tool.body);
    return agentId;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- runs are read as JSON, field by field
  async function ended(id: string, u = user): Promise<Record<string, any>> {
    return waitFor(`run ${id} to end`, async () => {
      const r = (await h.app.inject({ method: 'GET', url: `/api/runs/${id}`, headers: u.auth })).json();
      return (r.status === 'succeeded' || r.status === 'failed') && r;
    }, 30_000);
  }

  async function run(agentId: string, input: unknown, u = user) {
    const res = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs`, headers: u.auth, payload: { input } });
    assert.equal(res.statusCode, 202, res.body);
    return ended(res.json().id, u);
  }

  const rerun = (runId: string, payload?: unknown, headers: Record<string, string> = user.auth) =>
    h.app.inject({ method: 'POST', url: `/api/runs/${runId}/rerun`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  async function stepsOf(runId: string) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- steps are read as JSON, field by field
    return (await readAllPages(h.app, user, `/api/runs/${runId}/steps`)).items as unknown as Record<string, any>[];
  }

  /** model (asks for lookup) → tool → model (answers in text). */
  function scriptModelToolModel(model: string) {
    models.script(model, (call) => {
      const last = call.body.messages.at(-1)!;
      if (last.role !== 'tool') return toolCallsReply([{ id: 'call_1', name: 'lookup', arguments: { email: 'ann@example.com' } }]);
      return textReply(`Ann is on the ${JSON.parse(last.content!).plan} plan.`, { prompt_tokens: 30, completion_tokens: 9 });
    });
  }

  it('reruns from step 2 of a model–tool–model run: the steps before it copied, one model call, no tool call', async () => {
    scriptModelToolModel('m-rerun');
    const agentId = await createAgent('m-rerun');
    const original = await run(agentId, 'Which plan is Ann on?');
    assert.equal(original.status, 'succeeded', JSON.stringify(original));
    const toolCallsBefore = service.requests.length;
    assert.equal(models.callsFor('m-rerun').length, 2);

    // The rerun goes on with the agent as it is now: its system message changed since.
    const changed = await h.app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: user.auth, payload: { systemPrompt: 'Be brief.' } });
    assert.equal(changed.statusCode, 200, changed.body);

    const res = await rerun(original.id, { fromStep: 2 });
    assert.equal(res.statusCode, 202, res.body);
    const queued = res.json();
    assert.equal(queued.status, 'queued');
    assert.deepEqual(queued.rerunOf, { runId: original.id, fromStep: 2 });
    assert.equal(queued.agentId, agentId);
    assert.deepEqual(queued.input, 'Which plan is Ann on?', "the run's input");

    const done = await ended(queued.id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.output.text, 'Ann is on the gold plan.');
    const calls = models.callsFor('m-rerun');
    assert.equal(calls.length, 3, 'exactly one new model call');
    assert.equal(service.requests.length, toolCallsBefore, 'no tool call');
    assert.deepEqual(
      calls[2]!.body.messages,
      [{ role: 'system', content: 'Be brief.' }, ...calls[1]!.body.messages],
      'the conversation rebuilt from the copied steps, with the system message as it is now',
    );

    const steps = await stepsOf(done.id);
    assert.deepEqual(steps.map((s) => [s.index, s.type, s.copied]), [[0, 'model', true], [1, 'tool', true], [2, 'model', false]]);
    const originalSteps = await stepsOf(original.id);
    assert.deepEqual(originalSteps.map((s) => s.copied), [false, false, false]);
    assert.deepEqual(steps[1]!.output, originalSteps[1]!.output, 'recorded as it was');
    // Only what the rerun made counts: the copied steps were paid for by the original.
    assert.deepEqual(done.usage, { promptTokens: 30, completionTokens: 9, toolCalls: 0 });
    assert.deepEqual(done.output.usage, { promptTokens: 30, completionTokens: 9 });

    const again = (await h.app.inject({ method: 'GET', url: `/api/runs/${original.id}`, headers: user.auth })).json();
    assert.equal(again.rerunOf, null);
    assert.deepEqual(again.reruns, [{ runId: done.id, fromStep: 2, createdAt: done.createdAt }]);
  });

  it('reruns from step 0 with a new input: the model sees the new input', async () => {
    models.script('m-input', (call) => textReply(`you said ${call.body.messages.at(-1)!.content}`));
    const agentId = await createAgent('m-input');
    const original = await run(agentId, 'first');
    const res = await rerun(original.id, { input: 'second' });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json().rerunOf, { runId: original.id, fromStep: 0 });
    const done = await ended(res.json().id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.input, 'second');
    assert.equal(models.callsFor('m-input').at(-1)!.body.messages.at(-1)!.content, 'second');
    assert.equal(done.output.text, 'you said second');
    assert.deepEqual((await stepsOf(done.id)).map((s) => s.copied), [false]);

    // No body at all: the whole run again, with its own input.
    const whole = await rerun(original.id);
    assert.equal(whole.statusCode, 202, whole.body);
    assert.equal((await ended(whole.json().id)).output.text, 'you said first');
  });

  it('reruns a run of the tool executor from step 1: the first tool not called again, the second called once', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: 'no model' } });
    assert.equal(res.statusCode, 201, res.body);
    const agentId = res.json().id as string;
    for (const name of ['first', 'second']) {
      const tool = await h.app.inject({
        method: 'POST',
        url: `/api/agents/${agentId}/tools`,
        headers: user.auth,
        payload: { type: 'custom', name, configJson: { endpoint: `${service.url}/${name}`, method: 'POST', bodyTemplate: '{{input}}' } },
      });
      assert.equal(tool.statusCode, 201, tool.body);
    }
    const original = await run(agentId, { n: 1 });
    assert.equal(original.executor, 'tools');
    const called = (path: string) => service.requests.filter((r) => r.url === path).length;
    assert.deepEqual([called('/first'), called('/second')], [1, 1]);

    const again = await rerun(original.id, { fromStep: 1 });
    assert.equal(again.statusCode, 202, again.body);
    const done = await ended(again.json().id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.deepEqual([called('/first'), called('/second')], [1, 2]);
    assert.deepEqual((await stepsOf(done.id)).map((s) => [s.index, s.name, s.copied]), [[0, 'first', true], [1, 'second', false]]);
    assert.deepEqual(Object.keys(done.output.tools), ['first', 'second']);
    assert.equal(done.usage.toolCalls, 1, 'the copied call is not counted again');
  });

  it('refuses bad reruns: past the last step, not ended, input with a later step, another account, a viewer', async () => {
    scriptModelToolModel('m-bad');
    const agentId = await createAgent('m-bad');
    const original = await run(agentId, 'hi');
    const before = await h.db.query(`SELECT count(*)::int AS n FROM runs`);

    const past = await rerun(original.id, { fromStep: 4 });
    assert.equal(past.statusCode, 400, past.body);
    assert.match(past.json().message, /fromStep.*at most 3/);
    const withInput = await rerun(original.id, { fromStep: 1, input: 'x' });
    assert.equal(withInput.statusCode, 400, withInput.body);
    assert.match(withInput.json().message, /input/);
    const negative = await rerun(original.id, { fromStep: -1 });
    assert.equal(negative.statusCode, 400, negative.body);

    const stranger = await registerUser(h.app);
    const other = await rerun(original.id, { fromStep: 0 }, stranger.auth);
    assert.equal(other.statusCode, 404, other.body);
    const viewer = await joinWorkspace(h.app, user, 'viewer');
    const refused = await rerun(original.id, { fromStep: 0 }, viewer.headers);
    assert.equal(refused.statusCode, 403, refused.body);

    models.script('m-slow', () => ({ ...textReply('late'), delayMs: 3_000 }));
    const slowAgent = await createAgent('m-slow');
    const started = await h.app.inject({ method: 'POST', url: `/api/agents/${slowAgent}/runs`, headers: user.auth, payload: { input: 'wait' } });
    assert.equal(started.statusCode, 202, started.body);
    const going = await rerun(started.json().id);
    assert.equal(going.statusCode, 409, going.body);
    assert.match(going.json().message, /not ended/);

    const after = await h.db.query(`SELECT count(*)::int AS n FROM runs`);
    assert.equal(after.rows[0].n, before.rows[0].n + 1, 'no rerun written (the one more is the slow run)');
    // The last step is a valid place to go on from: every step copied, nothing left to make.
    const atEnd = await rerun(original.id, { fromStep: 3 });
    assert.equal(atEnd.statusCode, 202, atEnd.body);
    const finished = await ended(atEnd.json().id);
    assert.equal(finished.status, 'succeeded', JSON.stringify(finished));
    assert.deepEqual((await stepsOf(finished.id)).map((s) => s.copied), [true, true, true]);
    await ended(started.json().id);
  });

  it('replays failed runs: one rerun each, progress to done; a second replay at once is refused; since is required', async () => {
    let failing = true;
    models.script('m-replay', (call) => (failing ? errorReply(400, 'bad request') : textReply(`ok ${call.body.messages.at(-1)!.content}`)));
    const agentId = await createAgent('m-replay');
    const since = new Date(Date.now() - 1_000).toISOString();
    const failed = [];
    for (const input of ['a', 'b', 'c']) failed.push(await run(agentId, input));
    assert.deepEqual(failed.map((r) => r.status), ['failed', 'failed', 'failed']);
    failing = false;
    const succeeded = await run(agentId, 'd');
    assert.equal(succeeded.status, 'succeeded', 'a succeeded run is not replayed');

    const missing = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs/replay`, headers: user.auth, payload: { status: 'failed' } });
    assert.equal(missing.statusCode, 400, missing.body);
    assert.match(missing.json().message, /since/);

    const res = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs/replay`, headers: user.auth, payload: { status: 'failed', since } });
    assert.equal(res.statusCode, 202, res.body);
    const { id, count } = res.json();
    assert.equal(count, 3);

    const again = await h.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs/replay`, headers: user.auth, payload: { status: 'failed', since } });
    assert.equal(again.statusCode, 429, again.body);
    assert.ok(Number(again.headers['retry-after']) > 0, 'Retry-After');
    assert.match(again.json().message, /RECOVER_INTERVAL/);

    const progress = await waitFor('the replay to be done', async () => {
      const r = (await h.app.inject({ method: 'GET', url: `/api/agents/${agentId}/runs/replays/${id}`, headers: user.auth })).json();
      return r.status === 'done' && r;
    }, 30_000);
    assert.equal(progress.count, 3);
    assert.equal(progress.started, 3);

    const { rows } = await h.db.query(`SELECT id, rerun_of_run_id, rerun_from_step FROM runs WHERE rerun_of_run_id IS NOT NULL AND agent_id = $1`, [agentId]);
    assert.equal(rows.length, 3);
    for (const original of failed) assert.ok(rows.some((r) => r.rerun_of_run_id === original.id && r.rerun_from_step === 0), `a rerun of ${original.id}`);
    for (const r of rows) assert.equal((await ended(r.id)).status, 'succeeded');

    const stranger = await registerUser(h.app);
    const hidden = await h.app.inject({ method: 'GET', url: `/api/agents/${agentId}/runs/replays/${id}`, headers: stranger.auth });
    assert.equal(hidden.statusCode, 404, hidden.body);
  });
});
