import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, type TestUser } from '../helpers/app';
import { onCleanup, type Cleanup } from '../helpers/cleanup';
import { testEnv } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { startModelServer, textReply, toolCallsReply, type ModelServer } from '../helpers/model-server';
import { testNamespace } from '../helpers/namespace';
import { freePort, startProcess, waitFor, waitForApi } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { startTcpProxy } from '../helpers/tcp-proxy';

/**
 * A run waiting for a person (docs/architecture.md § Approvals) with the real API and worker processes:
 * both killed with SIGKILL while it waits, and Temporal unreachable when the decision is made. Either way
 * the decision takes effect once, the tool is called once, and the model step before the approval is not
 * made again.
 */

const namespace = testNamespace(__filename);

/** The API and worker processes on `database`, talking to Temporal at `temporalAddress`; killed when `t` ends. */
async function startStack(t: Cleanup, database: TestDatabase, temporalAddress: string, models: ModelServer) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = testEnv(database.url, {
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: namespace,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: base,
    MODEL_BASE_URL: models.baseUrl,
    MODEL_API_KEY: 'sk-test',
    INITIAL_BALANCE: '100000',
    RECONCILE_INTERVAL_MS: '500',
    LOG_LEVEL: 'info',
  });
  const stack = {
    base,
    api: startProcess('api/server.ts', env),
    worker: startProcess('worker/main.ts', env),
    /** Starts a new worker (after a kill) and waits until it polls. */
    restartWorker: async () => {
      stack.worker = startProcess('worker/main.ts', env);
      await waitFor('the worker to poll', async () => stack.worker.output().includes('polling task queue'), 60_000);
    },
    restartApi: async () => {
      stack.api = startProcess('api/server.ts', env);
      await waitForApi(base, stack.api);
    },
    outputs: () => `--- api ---\n${stack.api.output()}\n--- worker ---\n${stack.worker.output()}`,
  };
  onCleanup(t, () => stack.api.stop('SIGKILL'));
  onCleanup(t, () => stack.worker.stop('SIGKILL'));
  await waitForApi(base, stack.api);
  return stack;
}

/**
 * An agent whose model (`model`) asks once for `pay`, a custom tool that requires approval, then answers
 * with what it read; a run of it, waited for until it is `waiting`. Answers the run and its approval.
 */
async function waitingRun(base: string, user: TestUser, models: ModelServer, tools: Receiver, model: string) {
  models.script(model, (call, n) => (n === 0 ? toolCallsReply([{ id: 'call_1', name: 'pay', arguments: { amount: 5 } }]) : textReply(`read: ${call.body.messages.at(-1)!.content}`)));
  const agent = await api(base, user).ok('POST', '/api/agents', { name: 'payer', configJson: { model, approvalTimeout: '1h' } });
  await api(base, user).ok('POST', `/api/agents/${agent.id}/tools`, {
    type: 'custom', name: 'pay', requiresApproval: true, configJson: { endpoint: `${tools.url}/pay/${model}`, method: 'POST', bodyTemplate: '{{input}}' },
  });
  const run = await api(base, user).ok('POST', `/api/agents/${agent.id}/runs`, { input: 'pay' });
  await waitFor(`run ${run.id} to wait`, async () => (await api(base, user).ok('GET', `/api/runs/${run.id}`)).status === 'waiting', 60_000);
  const approvals = await api(base, user).ok('GET', `/api/runs/${run.id}/approvals`);
  assert.equal(approvals.length, 1);
  assert.equal(approvals[0].status, 'pending');
  return { runId: run.id as string, approvalId: approvals[0].id as string };
}

/** The run once it ended (the processes' output on time-out). */
function ended(base: string, user: TestUser, runId: string, outputs: () => string) {
  return waitFor(`run ${runId} to end`, async () => {
    const shown = await api(base, user).ok('GET', `/api/runs/${runId}`);
    return ['succeeded', 'failed'].includes(shown.status) && shown;
  }, 90_000).catch((err) => {
    throw new Error(`${err}\n${outputs()}`);
  });
}

/** The run finished once: one end event, steps model → approval → tool → model, each finished without error. */
async function assertFinishedOnce(database: TestDatabase, base: string, user: TestUser, runId: string) {
  const { rows } = await database.db.query(`SELECT type FROM events WHERE data ->> 'runId' = $1 AND type IN ('agent.completed', 'agent.failed')`, [runId]);
  assert.deepEqual(rows.map((r) => r.type), ['agent.completed'], 'the run ended once');
  const steps = await api(base, user).ok('GET', `/api/runs/${runId}/steps`);
  assert.deepEqual(steps.map((s: { type: string; error: string | null; finishedAt: string | null }) => [s.type, s.error, s.finishedAt !== null]), [
    ['model', null, true],
    ['approval', null, true],
    ['tool', null, true],
    ['model', null, true],
  ]);
}

describe('approvals through restarts: the processes killed, Temporal unreachable', () => {
  it('the worker and the API killed with SIGKILL while a run waits, both restarted, then approved: the run finishes once, the tool is called once, the model step is not made again', async (t) => {
    const database = await createTestDatabase(t);
    const models = await startModelServer(t);
    const tools = await startReceiver(t, (req) => ({ body: { paid: JSON.parse(req.body || 'null') } }));
    const stack = await startStack(t, database, process.env.TEMPORAL_ADDRESS!, models);
    const user = await registerUser(stack.base, 'approval-kill@example.com');
    const { runId, approvalId } = await waitingRun(stack.base, user, models, tools, 'm-kill');
    assert.equal(models.callsFor('m-kill').length, 1);

    assert.equal(await stack.worker.stop('SIGKILL'), 'SIGKILL');
    assert.equal(await stack.api.stop('SIGKILL'), 'SIGKILL');
    await stack.restartApi();
    await stack.restartWorker();
    assert.equal((await api(stack.base, user).ok('GET', `/api/runs/${runId}`)).status, 'waiting', 'still waiting after the restarts');

    const decided = await api(stack.base, user).ok('POST', `/api/approvals/${approvalId}/decision`, { decision: 'approve' });
    assert.equal(decided.status, 'approved');
    const done = await ended(stack.base, user, runId, stack.outputs);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    const calls = tools.requests.filter((r) => r.url === '/pay/m-kill');
    assert.equal(calls.length, 1, 'the tool is called once');
    assert.deepEqual(JSON.parse(calls[0]!.body), { amount: 5 });
    assert.equal(models.callsFor('m-kill').length, 2, 'the model step before the approval was not made again');
    await assertFinishedOnce(database, stack.base, user, runId);
  });

  it('a decision accepted while Temporal is unreachable is recorded (200) and takes effect when Temporal returns', async (t) => {
    const database = await createTestDatabase(t);
    const models = await startModelServer(t);
    const tools = await startReceiver(t, (req) => ({ body: { paid: JSON.parse(req.body || 'null') } }));
    const [host, port] = process.env.TEMPORAL_ADDRESS!.split(':');
    const temporal = await startTcpProxy(t, { host: host!, port: Number(port) });
    const stack = await startStack(t, database, `127.0.0.1:${temporal.port}`, models);
    const user = await registerUser(stack.base, 'approval-temporal-down@example.com');
    const { runId, approvalId } = await waitingRun(stack.base, user, models, tools, 'm-down');

    await temporal.cut();
    const decided = await api(stack.base, user).post(`/api/approvals/${approvalId}/decision`, { decision: 'approve', arguments: { amount: 9 } });
    assert.equal(decided.statusCode, 200, decided.body);
    assert.equal(decided.json().status, 'approved');
    const { rows: recorded } = await database.db.query(`SELECT status, arguments FROM approvals WHERE id = $1`, [approvalId]);
    assert.deepEqual(recorded, [{ status: 'approved', arguments: { amount: 9 } }], 'the decision is in Postgres');
    const { rows: held } = await database.db.query(`SELECT payload FROM outbox WHERE kind = 'signal'`);
    assert.deepEqual(held.map((r) => r.payload.workflowId), [`run:${runId}`], "the run's signal waits in the outbox");
    assert.equal(tools.requests.length, 0, 'nothing called while Temporal is unreachable');
    assert.equal((await api(stack.base, user).ok('GET', `/api/runs/${runId}`)).status, 'waiting');

    await temporal.restore();
    const done = await ended(stack.base, user, runId, stack.outputs);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    const calls = tools.requests.filter((r) => r.url === '/pay/m-down');
    assert.equal(calls.length, 1, 'the tool is called once');
    assert.deepEqual(JSON.parse(calls[0]!.body), { amount: 9 }, 'with the arguments decided while Temporal was away');
    assert.equal(models.callsFor('m-down').length, 2, 'the model step before the approval was not made again');
    await assertFinishedOnce(database, stack.base, user, runId);
    await waitFor('the outbox drained', async () => (await database.db.query(`SELECT count(*)::int AS n FROM outbox`)).rows[0].n === 0, 30_000);
  });
});
