import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { decodeTimeoutType } from '@temporalio/common';
import { Webhook } from 'standardwebhooks';
import { startTemporalDevServer, type TemporalDevServer } from '../../scripts/temporal-dev-server';
import { workflowIds } from '../../engine/temporal/names';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { onCleanup, type Cleanup } from '../helpers/cleanup';
import { testEnv } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';
import { testNamespace } from '../helpers/namespace';
import { errorReply, startModelServer, textReply, toolCallsReply } from '../helpers/model-server';
import { freePort, startProcess, waitFor, waitForApi } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';

/**
 * The real API and worker processes over HTTP, with the parts killed: the worker with SIGKILL in the
 * middle of deliveries, and Temporal itself stopped while triggers are written (docs/architecture.md § The outbox, the hand-off and the reconciler).
 */

const SECRET = `whsec_${Buffer.from('resilience-test-secret-32-bytes!').toString('base64')}`;

/**
 * One stack's API and worker processes on `databaseUrl`, killed when `t` ends; answers once the API
 * answers. `restartWorker()` starts a new worker in place of `worker` (after a kill), `restartApi()` an API.
 */
async function startStack(t: Cleanup, databaseUrl: string, temporalAddress: string, namespace: string, extraEnv: Record<string, string> = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = testEnv(databaseUrl, {
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: namespace,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: base,
    WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s',
    WEBHOOK_TIMEOUT_MS: '3000',
    RECONCILE_INTERVAL_MS: '500',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  });
  const apiProcess = startProcess('api/server.ts', env);
  const stack = {
    base,
    api: apiProcess,
    worker: startProcess('worker/main.ts', env),
    restartWorker: () => {
      stack.worker = startProcess('worker/main.ts', env);
    },
    restartApi: async () => {
      stack.api = startProcess('api/server.ts', env);
      await waitForApi(base, stack.api);
    },
  };
  onCleanup(t, () => stack.api.stop('SIGKILL'));
  onCleanup(t, () => stack.worker.stop('SIGKILL'));
  await waitForApi(base, stack.api);
  return stack;
}

/** A receiver that refuses each delivery's first attempt (503) and answers the next ones slowly (200 after 1.5 s). */
function refusingFirstAttempts(t: Parameters<typeof startReceiver>[0]) {
  const seen = new Set<string>();
  return startReceiver(t, (req) => {
    const id = req.headers['webhook-id'] as string;
    if (!seen.has(id)) {
      seen.add(id);
      return { status: 503 };
    }
    return { status: 200, delayMs: 1_500 };
  });
}

describe('resilience: processes killed, Temporal stopped', () => {
  // Each test's processes go when it ends (clean-ups on its own `t`): workers of two tests would share this file's namespace.

  it('the worker killed with SIGKILL mid-delivery and restarted: every delivery arrives and is counted once', async (t) => {
    const database = await createTestDatabase(t);
    const verifier = new Webhook(SECRET);
    // Each delivery's first attempt (made by the API) is refused, so its workflow makes the next ones on
    // the worker; those get slow answers, so attempts are in flight when the worker dies.
    const receiver = await refusingFirstAttempts(t);
    const stack = await startStack(t, database.url, process.env.TEMPORAL_ADDRESS!, testNamespace(__filename));
    const { base } = stack;

    const user = await registerUser(base, 'kill-worker@example.com');
    const webhook = await api(base, user).post('/api/webhooks', { name: 'receiver', url: `${receiver.url}/hook`, events: ['agent.created'], secret: SECRET });
    assert.equal(webhook.statusCode, 201);
    const agentIds: string[] = [];
    for (let i = 0; i < 5; i++) agentIds.push((await api(base, user).post('/api/agents', { name: `agent ${i}` })).json().id);

    await waitFor('a workflow\'s attempt in flight', async () => receiver.requests.length >= 6, 30_000);
    assert.equal(await stack.worker.stop('SIGKILL'), 'SIGKILL');
    const inFlightAtKill = receiver.requests.length - 5;
    stack.restartWorker();

    const deliveries = await waitFor('every delivery succeeded', async () => {
      const { rows } = await database.db.query(`SELECT id, status, event_id FROM deliveries WHERE webhook_id = $1`, [webhook.json().id]);
      return rows.length === 5 && rows.every((r) => r.status === 'succeeded') && rows;
    }, 90_000).catch((err) => {
      throw new Error(`${err}\n--- worker output ---\n${stack.worker.output()}`);
    });

    // Every event arrived (at least once: a request cut by the kill is sent again with the same webhook-id)…
    const received = new Map<string, { type: string; data: { agentId: string } }>();
    for (const request of receiver.requests) {
      const payload = verifier.verify(request.body, request.headers as Record<string, string>) as { type: string; data: { agentId: string } };
      received.set(request.headers['webhook-id'] as string, payload);
    }
    assert.deepEqual(new Set(received.keys()), new Set(deliveries.map((d) => d.event_id)));
    assert.deepEqual(new Set([...received.values()].map((p) => p.data.agentId)), new Set(agentIds));
    assert.ok(inFlightAtKill >= 1);
    // …and each event is counted once.
    const shown = await api(base, user).get(`/api/webhooks/${webhook.json().id}`);
    assert.equal(shown.json().triggerCount, 5);
    const events = await database.db.query(`SELECT count(*)::int AS n FROM events WHERE type = 'agent.created'`);
    assert.equal(events.rows[0].n, 5);

    // The attempts cut by the kill were taken up again once their heartbeats stopped (seconds), not at the
    // end of their time limit: each retried attempt's history names a heartbeat timeout as what ended the try before.
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    onCleanup(t, () => connection.close());
    const client = new Client({ connection, namespace: testNamespace(__filename) });
    const retried: (string | undefined)[] = [];
    for (const d of deliveries) {
      const history = await client.workflow.getHandle(workflowIds.delivery(d.id)).fetchHistory();
      for (const e of history.events ?? []) {
        const started = e.activityTaskStartedEventAttributes;
        if (started && (started.attempt ?? 1) > 1) retried.push(decodeTimeoutType(started.lastFailure?.timeoutFailureInfo?.timeoutType));
      }
    }
    assert.ok(retried.length >= 1, 'an attempt in flight at the kill was retried');
    assert.deepEqual(new Set(retried), new Set(['HEARTBEAT']));
  });

  it('the worker killed with SIGKILL while hooks arrive: every accepted hook is delivered or its run finished within 15 s of the worker\'s return', async (t) => {
    const database = await createTestDatabase(t);
    // Each delivery's first attempt (the API's) is refused, so the rest is the worker's: slow answers
    // keep attempts in flight when it dies. The tool each run calls answers slowly too.
    const receiver = await refusingFirstAttempts(t);
    const tools = await startReceiver(t, () => ({ body: { ok: true }, delayMs: 1_500 }));
    // At info the worker says when it polls: that is its return.
    const stack = await startStack(t, database.url, process.env.TEMPORAL_ADDRESS!, testNamespace(__filename), { LOG_LEVEL: 'info' });
    const { base } = stack;

    const user = await registerUser(base, 'kill-worker-hooks@example.com');
    const outgoing = await api(base, user).ok('POST', '/api/webhooks', { name: 'out', url: `${receiver.url}/hook`, events: ['webhook.received'], secret: SECRET });
    const incoming = await api(base, user).ok('POST', '/api/webhooks', { name: 'in', direction: 'incoming' });
    const agent = await api(base, user).ok('POST', '/api/agents', { name: 'hooked', status: 'active' });
    await api(base, user).ok('POST', `/api/agents/${agent.id}/tools`, { type: 'custom', name: 'slow', configJson: { endpoint: `${tools.url}/slow` } });
    const trigger = await api(base, user).ok('POST', `/api/agents/${agent.id}/triggers`, { name: 'hook', type: 'webhook' });
    const hooks = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const event = await api(base).post(`/api/hooks/webhooks/${incoming.id}`, JSON.stringify({ i }));
        assert.equal(event.statusCode, 202, event.body);
        const fire = await api(base).post(`/api/hooks/triggers/${trigger.configJson.webhookPath}`, JSON.stringify({ i }), { 'x-trigger-token': trigger.configJson.secretToken });
        assert.equal(fire.statusCode, 202, fire.body);
      }
    };

    await hooks(4);
    await waitFor('delivery attempts and tool calls in flight', async () => receiver.requests.length >= 6 && tools.requests.length >= 1, 30_000);
    assert.equal(await stack.worker.stop('SIGKILL'), 'SIGKILL');
    // Accepted while no worker runs.
    await hooks(4);
    await sleep(1_000); // npm start's first restart delay
    stack.restartWorker();
    await waitFor('the new worker to poll', async () => stack.worker.output().includes('polling task queue'), 60_000);
    const returnedAt = Date.now();

    const finished = await waitFor('every delivery and run finished', async () => {
      const { rows } = await database.db.query(
        `SELECT (SELECT count(*) FROM deliveries WHERE webhook_id = $1 AND status = 'succeeded')::int AS delivered,
                (SELECT count(*) FROM runs WHERE trigger_id = $2 AND status = 'succeeded')::int AS ran,
                (SELECT count(*) FROM runs WHERE trigger_id = $2 AND status = 'failed')::int AS failed,
                extract(epoch FROM greatest((SELECT max(finished_at) FROM deliveries WHERE webhook_id = $1),
                                            (SELECT max(finished_at) FROM runs WHERE trigger_id = $2))) * 1000 AS last_ms`,
        [outgoing.id, trigger.id],
      );
      const r = rows[0];
      return r.delivered === 8 && r.ran + r.failed === 8 && r;
    }, 90_000).catch((err) => {
      throw new Error(`${err}\n--- worker output ---\n${stack.worker.output()}`);
    });
    assert.equal(finished.failed, 0);
    const afterReturnMs = Number(finished.last_ms) - returnedAt;
    t.diagnostic(`last delivery or run finished ${afterReturnMs} ms after the worker's return`);
    assert.ok(afterReturnMs <= 15_000, `the last one finished ${afterReturnMs} ms after the worker's return`);
    // Each hook's event reached the receiver, and each trigger hook made one run.
    const ids = new Set(receiver.requests.filter((r) => !r.aborted).map((r) => r.headers['webhook-id']));
    assert.equal(ids.size, 8);
    assert.equal((await database.db.query(`SELECT count(*)::int AS n FROM runs WHERE trigger_id = $1`, [trigger.id])).rows[0].n, 8);
  });

  it('the API killed with SIGKILL mid first attempt: the held workflow starts take over, every delivery arrives and is counted once', async (t) => {
    const database = await createTestDatabase(t);
    // Slow answers: the API's first attempts are all in flight when it dies.
    const receiver = await startReceiver(t, () => ({ status: 200, delayMs: 1_500 }));
    const stack = await startStack(t, database.url, process.env.TEMPORAL_ADDRESS!, testNamespace(__filename));
    const user = await registerUser(stack.base, 'kill-api@example.com');
    const webhook = await api(stack.base, user).post('/api/webhooks', { name: 'receiver', url: `${receiver.url}/hook`, events: ['agent.created'], secret: SECRET });
    assert.equal(webhook.statusCode, 201);
    for (let i = 0; i < 5; i++) assert.equal((await api(stack.base, user).post('/api/agents', { name: `agent ${i}` })).statusCode, 201);

    await waitFor('every first attempt in flight', async () => receiver.requests.length >= 5, 30_000);
    assert.equal(await stack.api.stop('SIGKILL'), 'SIGKILL');

    // No API now: the worker's reconciler hands off the held starts once their hold runs out.
    const deliveries = await waitFor('every delivery succeeded', async () => {
      const { rows } = await database.db.query(`SELECT id, status, event_id FROM deliveries WHERE webhook_id = $1`, [webhook.json().id]);
      return rows.length === 5 && rows.every((r) => r.status === 'succeeded') && rows;
    }, 60_000).catch((err) => {
      throw new Error(`${err}\n--- worker output ---\n${stack.worker.output()}`);
    });
    const ids = receiver.requests.map((r) => r.headers['webhook-id'] as string);
    assert.deepEqual(new Set(ids), new Set(deliveries.map((d) => d.event_id)));
    assert.ok(ids.length >= 10, 'each cut attempt was made again by its workflow, with the same webhook-id');
    // Counted beside the webhook's row (migration 24), once per delivery whatever the kill.
    const { rows } = await database.db.query(`SELECT sum(trigger_count)::int AS n FROM webhook_trigger_counts WHERE webhook_id = $1`, [webhook.json().id]);
    assert.equal(rows[0].n, 5);
    assert.equal((await database.db.query(`SELECT count(*)::int AS n FROM outbox`)).rows[0].n, 0);
    await stack.restartApi();
  });

  it('the worker killed with SIGKILL after a tool call returned and restarted: the run resumes, that call is not made again', async (t) => {
    const database = await createTestDatabase(t);
    // The second tool hangs the first time (the worker dies meanwhile), and answers at once after that.
    const tools = await startReceiver(t, (req) => ({
      body: { path: req.url },
      delayMs: req.url === '/second' && tools.requests.filter((r) => r.url === '/second').length === 1 ? 120_000 : 0,
    }));
    const stack = await startStack(t, database.url, process.env.TEMPORAL_ADDRESS!, testNamespace(__filename));
    const { base } = stack;

    const user = await registerUser(base, 'kill-run@example.com');
    const agent = await api(base, user).post('/api/agents', { name: 'resumes' });
    for (const name of ['first', 'second']) {
      const tool = await api(base, user).post(`/api/agents/${agent.json().id}/tools`, { type: 'custom', name, configJson: { endpoint: `${tools.url}/${name}` } });
      assert.equal(tool.statusCode, 201, tool.body);
    }
    const run = await api(base, user).post(`/api/agents/${agent.json().id}/runs`, { input: 'x' });
    assert.equal(run.statusCode, 202);

    await waitFor('the second call in flight', async () => tools.requests.some((r) => r.url === '/second'), 30_000);
    assert.equal(await stack.worker.stop('SIGKILL'), 'SIGKILL');
    stack.restartWorker();

    const done = await waitFor('the run to finish', async () => {
      const res = await api(base, user).get(`/api/runs/${run.json().id}`);
      const shown = res.json();
      return ['succeeded', 'failed'].includes(shown.status) && shown;
    }, 90_000).catch((err) => {
      throw new Error(`${err}\n--- worker output ---\n${stack.worker.output()}`);
    });
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(tools.requests.filter((r) => r.url === '/first').length, 1, 'the call that returned before the kill was not made again');
    assert.equal(tools.requests.filter((r) => r.url === '/second').length, 2, 'the call cut by the kill was made again');
    assert.deepEqual(done.output.tools.second.result, { path: '/second' });
    const steps = await api(base, user).get(`/api/runs/${run.json().id}/steps`);
    assert.deepEqual(steps.json().map((st: { name: string; error: string | null }) => [st.name, st.error]), [['first', null], ['second', null]]);
  });

  it('the worker killed with SIGKILL between a tool step and the next model step: the tool is called once, and the key is in no log line', async (t) => {
    const database = await createTestDatabase(t);
    const key = 'sk-resilience-0123456789abcdef-KEY';
    const models = await startModelServer(t);
    // The model asks for the tool; the call after the tool's result hangs the first time (the worker
    // dies meanwhile) and answers at once after that.
    models.script('m-resume', (_call, n) =>
      n === 0 ? toolCallsReply([{ name: 'probe', arguments: { q: 1 } }]) : n === 1 ? { ...textReply('too late'), delayMs: 120_000 } : textReply('resumed'),
    );
    models.script('m-echo-key', () => errorReply(401, `Incorrect API key provided: ${key}`));
    const tools = await startReceiver(t, () => ({ body: { probed: true } }));
    const stack = await startStack(t, database.url, process.env.TEMPORAL_ADDRESS!, testNamespace(__filename), {
      MODEL_BASE_URL: models.baseUrl,
      MODEL_API_KEY: key,
      LOG_LEVEL: 'debug',
    });
    const { base } = stack;

    const user = await registerUser(base, 'kill-model-run@example.com');
    const agent = await api(base, user).ok('POST', '/api/agents', { name: 'thinks', configJson: { model: 'm-resume' } });
    await api(base, user).ok('POST', `/api/agents/${agent.id}/tools`, { type: 'custom', name: 'probe', configJson: { endpoint: `${tools.url}/probe`, method: 'POST', bodyTemplate: '{{input}}' } });
    const run = await api(base, user).ok('POST', `/api/agents/${agent.id}/runs`, { input: 'probe it' });

    await waitFor('the model call after the tool step in flight', async () => models.callsFor('m-resume').length === 2, 30_000);
    assert.equal(tools.requests.length, 1);
    const steps = await api(base, user).ok('GET', `/api/runs/${run.id}/steps`);
    assert.deepEqual(steps.map((st: { type: string; finishedAt: string | null }) => [st.type, st.finishedAt !== null]), [['model', true], ['tool', true], ['model', false]]);
    assert.equal(await stack.worker.stop('SIGKILL'), 'SIGKILL');
    const killedWorkerOutput = stack.worker.output();
    stack.restartWorker();

    const done = await waitFor('the run to finish', async () => {
      const shown = await api(base, user).ok('GET', `/api/runs/${run.id}`);
      return ['succeeded', 'failed'].includes(shown.status) && shown;
    }, 90_000).catch((err) => {
      throw new Error(`${err}\n--- worker output ---\n${stack.worker.output()}`);
    });
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.output.text, 'resumed');
    assert.equal(tools.requests.length, 1, 'the tool call that returned before the kill was not made again');
    assert.deepEqual(JSON.parse(tools.requests[0]!.body), { q: 1 });
    assert.equal(models.callsFor('m-resume').length, 3, 'the model call cut by the kill was made again, the first one was not');
    const after = await api(base, user).ok('GET', `/api/runs/${run.id}/steps`);
    assert.deepEqual(after.map((st: { type: string; error: string | null }) => [st.type, st.error]), [['model', null], ['tool', null], ['model', null]]);

    // A provider that echoes the key: the run fails with its message, and the key is in no output of either process.
    const echo = await api(base, user).ok('POST', '/api/agents', { name: 'echo', configJson: { model: 'm-echo-key' } });
    const failing = await api(base, user).ok('POST', `/api/agents/${echo.id}/runs`, { input: 'hi' });
    const failed = await waitFor('the echoing run to fail', async () => {
      const shown = await api(base, user).ok('GET', `/api/runs/${failing.id}`);
      return shown.status === 'failed' && shown;
    }, 30_000);
    assert.match(failed.error, /Incorrect API key provided: \[redacted\]/);
    assert.equal(models.callsFor('m-echo-key')[0]!.headers.authorization, `Bearer ${key}`, 'the key was sent to the provider');
    const logs = stack.api.output() + killedWorkerOutput + stack.worker.output();
    assert.ok(logs.length > 0);
    assert.equal(logs.includes(key), false, 'the key in a log line');
  });

  it('Temporal stopped while triggers are created, then restarted: their schedules exist and fire', async (t) => {
    const database = await createTestDatabase(t);
    const dir = mkdtempSync(path.join(tmpdir(), 'temporal-restart-'));
    onCleanup(t, async () => rmSync(dir, { recursive: true, force: true }));
    const temporalPort = await freePort();
    const uiPort = await freePort();
    // The same port and SQLite file on restart: Temporal comes back with its state.
    const startTemporal = () => startTemporalDevServer({ port: temporalPort, uiPort, dbFilename: path.join(dir, 'temporal.db'), onLine: () => {} });
    let temporal: TemporalDevServer = await startTemporal();
    onCleanup(t, () => temporal.stop());
    // The file is kept with a write-ahead log (scripts/temporal-dev-server.ts SQLITE_PRAGMAS), as `npm start` keeps it.
    assert.ok(existsSync(path.join(dir, 'temporal.db-wal')), 'the dev server keeps its SQLite file in WAL mode');
    const stack = await startStack(t, database.url, temporal.address, 'default');
    const { base } = stack;
    const user = await registerUser(base, 'temporal-down@example.com');

    await temporal.stop();
    // Writes are accepted while Temporal is down: they wait in the outbox.
    const triggerIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const started = Date.now();
      const res = await api(base, user).post('/api/user-triggers', { type: 'cron', name: `t${i}`, configJson: { cronExpression: '*/2 * * * * *' } });
      assert.equal(res.statusCode, 201, res.body);
      assert.ok(Date.now() - started < 5_000, 'the API answers without waiting for Temporal');
      triggerIds.push(res.json().id);
    }
    const pending = await database.db.query(`SELECT count(*)::int AS n FROM outbox WHERE kind = 'schedule'`);
    assert.ok(pending.rows[0].n >= 2, 'schedule syncs wait in the outbox');

    temporal = await startTemporal();
    const connection = await Connection.connect({ address: temporal.address });
    onCleanup(t, () => connection.close());
    const client = new Client({ connection, namespace: 'default' });
    for (const id of triggerIds) {
      await waitFor(`schedule of ${id}`, () => client.schedule.getHandle(workflowIds.triggerSchedule(id)).describe().catch(() => undefined), 60_000).catch((err) => {
        throw new Error(`${err}\n--- worker output ---\n${stack.worker.output()}`);
      });
      await waitFor(`trigger ${id} fires`, async () => (await api(base, user).get(`/api/user-triggers/${id}`)).json().fireCount >= 1, 30_000);
    }
    await waitFor('the outbox drained', async () => (await database.db.query(`SELECT count(*)::int AS n FROM outbox`)).rows[0].n === 0, 30_000);
  });
});
