import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { TASK_QUEUE, workflowIds } from '../../engine/temporal/names';
import { api } from '../helpers/api';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { testEnv } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { testNamespace } from '../helpers/namespace';
import { freePort, startProcess, waitFor, waitForApi, type RunningProcess } from '../helpers/processes';

const namespace = testNamespace(__filename);

describe('end to end: the real API and worker processes over HTTP', () => {
  const suite = suiteContext();
  let database: TestDatabase;
  let apiProcess: RunningProcess;
  let worker: RunningProcess;
  let base: string;

  before(async () => {
    database = await createTestDatabase(suite);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env = testEnv(database.url, { TEMPORAL_NAMESPACE: namespace, PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: base, LOG_LEVEL: 'warn' });
    apiProcess = startProcess('api/server.ts', env);
    onCleanup(suite, () => apiProcess.stop('SIGKILL'));
    // At the default level, to see what an operator sees at every start.
    worker = startProcess('worker/main.ts', { ...env, LOG_LEVEL: 'info' });
    onCleanup(suite, () => worker.stop('SIGKILL'));
    await waitForApi(base, apiProcess);
  });

  it('reports Temporal healthy through HTTP', async () => {
    const res = await api(base).get('/api/health/temporal');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { ok: true });
    assert.equal(res.headers['api-version'], '1');
    assert.deepEqual((await api(base).get('/api/health/db')).json(), { ok: true });
  });

  it('registers, creates an agent and reads it back over HTTP', async () => {
    const reg = await api(base).post('/api/auth/register', { email: 'e2e@example.com', password: 'e2e-password' });
    assert.equal(reg.statusCode, 201);
    const { accessToken } = reg.json<{ accessToken: string }>();
    const created = await api(base, accessToken).post('/api/agents', { name: 'over http' });
    assert.equal(created.statusCode, 201);
    const agent = created.json<{ id: string }>();
    const read = await api(base, accessToken).get(`/api/agents/${agent.id}`);
    assert.equal(read.json<{ name: string }>().name, 'over http');
    assert.equal((await api(base).get(`/api/agents/${agent.id}`)).statusCode, 401);
  });

  it('the worker process polls agent-platform and runs activities against its database', async () => {
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    try {
      const client = new Client({ connection, namespace });
      const result = await client.workflow.execute('healthProbeWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId: workflowIds.healthProbe(randomUUID()),
        workflowExecutionTimeout: '60s',
      });
      assert.deepEqual(result, { ok: true, database: new URL(database.url).pathname.slice(1) });
    } finally {
      await connection.close();
    }
  });

  it('the worker says in a few lines that it started: no bundle report, no SDK chatter', async () => {
    await waitFor('the worker to poll', async () => worker.output().includes('[worker] polling task queue'), 60_000);
    const lines = worker.output().trimEnd().split('\n');
    assert.deepEqual(
      lines.map((line) => line.replace(/\(.*$/, '').trim()),
      ['[worker] workflows bundled', '[worker] polling task queue on ' + process.env.TEMPORAL_ADDRESS],
      worker.output(),
    );
  });

  it('both processes shut down cleanly on SIGTERM', async () => {
    const [apiExit, workerExit] = await Promise.all([apiProcess.stop('SIGTERM'), worker.stop('SIGTERM')]);
    assert.equal(apiExit, 0, apiProcess.output());
    assert.equal(workerExit, 0, worker.output());
  });
});
