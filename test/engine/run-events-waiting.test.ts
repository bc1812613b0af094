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

/** The steps, approvals and the end: a model step's text in `delta`s is run-deltas.test.ts's. */
const notDelta = (e: SseEvent) => e.event !== 'delta';

/**
 * GET /api/runs/:id/events while a run waits for an approval (docs/api.md § Approvals): `waiting` with the
 * approval, then — once it is decided, on the same stream — the steps the run goes on with, and `done`.
 * The heartbeat is long (a minute), so what arrives came by the database's notifications, not by a heartbeat's read.
 */
describe('run events while a run waits for an approval', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let models: ModelServer;
  let service: Receiver;
  let user: TestUser;
  let base: string;
  const open: SseStream[] = [];

  before(async () => {
    models = await startModelServer(suite);
    service = await startReceiver(suite, () => ({ body: { paid: true } }));
    h = await startEngine(suite, __filename, {
      MODEL_BASE_URL: models.baseUrl,
      MODEL_API_KEY: 'sk-test',
      INITIAL_BALANCE: '100000',
      RUN_EVENTS_HEARTBEAT_MS: '60000',
    });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    onCleanup(suite, () => open.forEach((s) => s.close()));
    user = await registerUser(h.app);
  });

  const api = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
    h.app.inject({ method, url, headers: user.auth, ...(payload !== undefined ? { payload } : {}) });

  async function events(runId: string): Promise<SseStream> {
    const stream = await openSse(`${base}/api/runs/${runId}/events`, user.auth);
    open.push(stream);
    return stream;
  }

  /** An agent whose model `model` asks once for `pay` (which requires approval), then answers; a run of it started. */
  async function startPayingRun(model: string): Promise<{ runId: string; toolId: string }> {
    models.script(model, (_call, n) => (n === 0 ? toolCallsReply([{ id: 'call_1', name: 'pay', arguments: { amount: 5 } }]) : textReply('paid')));
    const agent = await api('POST', '/api/agents', { name: model, configJson: { model, approvalTimeout: '1h' } });
    assert.equal(agent.statusCode, 201, agent.body);
    const tool = await api('POST', `/api/agents/${agent.json().id}/tools`, {
      type: 'custom', name: 'pay', requiresApproval: true, configJson: { endpoint: `${service.url}/pay/${model}`, method: 'POST', bodyTemplate: '{{input}}' },
    });
    assert.equal(tool.statusCode, 201, tool.body);
    const started = await api('POST', `/api/agents/${agent.json().id}/runs`, { input: 'pay' });
    assert.equal(started.statusCode, 202, started.body);
    return { runId: started.json().id, toolId: tool.json().id };
  }

  /** The stream's events (deltas aside) once `waiting` came. */
  const waitingArrived = (stream: SseStream) =>
    waitFor('the `waiting` event', async () => stream.events().some((e) => e.event === 'waiting') && stream.events().filter(notDelta), 30_000);

  /** The events after `waiting`: the approval step, the tool's, the model's, then `done` (succeeded). */
  function assertGoesOn(stream: SseStream, approvalId: string, from: number) {
    const after = stream.events().filter(notDelta).slice(from);
    assert.deepEqual(after.map((e) => e.event), ['step', 'step', 'step', 'done'], JSON.stringify(after.map((e) => [e.event, e.id])));
    const [approvalStep, toolStep, modelStep] = after.slice(0, 3).map((e) => JSON.parse(e.data));
    assert.equal(approvalStep.type, 'approval');
    assert.equal(approvalStep.approvalId, approvalId);
    assert.equal(toolStep.type, 'tool');
    assert.deepEqual(toolStep.output, { paid: true });
    assert.equal(modelStep.type, 'model');
    assert.equal(JSON.parse(after[3]!.data).status, 'succeeded');
  }

  it('sends `waiting` with the approval when the run begins to wait, then the steps and `done` on the same stream once it is approved', async () => {
    const { runId, toolId } = await startPayingRun('wait-live');
    const stream = await events(runId);
    const seen = await waitingArrived(stream);
    assert.deepEqual(seen.map((e) => [e.event, e.id]), [['step', '0'], ['waiting', undefined]]);
    const waiting = JSON.parse(seen[1]!.data);
    const approvals = (await api('GET', `/api/runs/${runId}/approvals`)).json();
    assert.equal(approvals.length, 1);
    assert.deepEqual(waiting, approvals[0], 'the approval as GET /api/runs/:id/approvals shows it');
    assert.equal(waiting.status, 'pending');
    assert.equal(waiting.toolId, toolId);
    assert.deepEqual(waiting.arguments, { amount: 5 });
    assert.equal((await api('GET', `/api/runs/${runId}`)).json().status, 'waiting');
    assert.equal(service.requests.length, 0, 'no call before the decision');

    const decided = await api('POST', `/api/approvals/${waiting.id}/decision`, { decision: 'approve' });
    assert.equal(decided.statusCode, 200, decided.body);
    await stream.ended;
    assertGoesOn(stream, waiting.id, 2);
    assert.equal(stream.events().filter((e) => e.event === 'waiting').length, 1, '`waiting` once');
  });

  it('a run that waits twice: each approval comes as `waiting` on the same stream, once each, the second after the first was decided', async () => {
    models.script('wait-twice', (_call, n) =>
      n < 2 ? toolCallsReply([{ id: `call_${n}`, name: 'pay', arguments: { amount: n + 1 } }]) : textReply('paid twice'),
    );
    const agent = await api('POST', '/api/agents', { name: 'wait-twice', configJson: { model: 'wait-twice', approvalTimeout: '1h' } });
    assert.equal(agent.statusCode, 201, agent.body);
    const tool = await api('POST', `/api/agents/${agent.json().id}/tools`, {
      type: 'custom', name: 'pay', requiresApproval: true, configJson: { endpoint: `${service.url}/pay/wait-twice`, method: 'POST', bodyTemplate: '{{input}}' },
    });
    assert.equal(tool.statusCode, 201, tool.body);
    const started = await api('POST', `/api/agents/${agent.json().id}/runs`, { input: 'pay twice' });
    assert.equal(started.statusCode, 202, started.body);
    const stream = await events(started.json().id);

    const approvals = [];
    for (const amount of [1, 2]) {
      const waiting = await waitFor(`the \`waiting\` event of amount ${amount}`, async () =>
        stream.events().filter((e) => e.event === 'waiting').map((e) => JSON.parse(e.data)).find((a) => a.arguments.amount === amount), 30_000);
      approvals.push(waiting.id);
      const decided = await api('POST', `/api/approvals/${waiting.id}/decision`, { decision: 'approve' });
      assert.equal(decided.statusCode, 200, decided.body);
    }
    await stream.ended;
    const received = stream.events().filter(notDelta);
    assert.deepEqual(
      received.map((e) => (e.event === 'step' ? JSON.parse(e.data).type : e.event)),
      ['model', 'waiting', 'approval', 'tool', 'model', 'waiting', 'approval', 'tool', 'model', 'done'],
    );
    assert.deepEqual(received.filter((e) => e.event === 'waiting').map((e) => JSON.parse(e.data).id), approvals, 'each approval once, in order');
    assert.equal(service.requests.filter((r) => r.url === '/pay/wait-twice').length, 2);
  });

  it('sends `waiting` at once to a stream opened while the run already waits, then goes on when it is decided', async () => {
    const { runId } = await startPayingRun('wait-late');
    await waitFor(`run ${runId} to wait`, async () => (await api('GET', `/api/runs/${runId}`)).json().status === 'waiting', 30_000);
    const stream = await events(runId);
    const seen = await waitingArrived(stream);
    assert.deepEqual(seen.map((e) => e.event), ['step', 'waiting']);
    const waiting = JSON.parse(seen[1]!.data);
    assert.equal(waiting.runId, runId);

    const decided = await api('POST', `/api/approvals/${waiting.id}/decision`, { decision: 'approve' });
    assert.equal(decided.statusCode, 200, decided.body);
    await stream.ended;
    assertGoesOn(stream, waiting.id, 2);
    assert.equal(service.requests.filter((r) => r.url === '/pay/wait-late').length, 1, 'the tool called once');
  });
});
