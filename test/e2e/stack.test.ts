import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { TASK_QUEUE, workflowIds } from '../../lib/temporal-names';
import { createTestDatabase } from '../helpers/database';
import { testNamespace } from '../helpers/namespace';
import { freePort, startProcess, waitFor, type RunningProcess } from '../helpers/processes';

const namespace = testNamespace(__filename);

describe('end to end: the real API and worker processes over HTTP', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: RunningProcess;
  let worker: RunningProcess;
  let base: string;

  before(async () => {
    database = await createTestDatabase();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
      TEMPORAL_NAMESPACE: namespace,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      JWT_SECRET: 'e2e-secret-e2e-secret-e2e-secret-e2e-secret',
      SECRETS_KEY: Buffer.alloc(32, 3).toString('base64'),
      LOG_LEVEL: 'warn',
    };
    api = startProcess('api/server.ts', env);
    // At the default level, to see what an operator sees at every start.
    worker = startProcess('worker/main.ts', { ...env, LOG_LEVEL: 'info' });
    await waitFor('the API to answer /api/health', async () => (await fetch(`${base}/api/health`)).ok, 60_000).catch((err) => {
      throw new Error(`${err}\n--- api output ---\n${api.output()}`);
    });
  });

  after(async () => {
    await api?.stop('SIGKILL');
    await worker?.stop('SIGKILL');
    await database?.drop();
  });

  it('reports Temporal healthy through HTTP', async () => {
    const res = await fetch(`${base}/api/health/temporal`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true });
    assert.equal(res.headers.get('api-version'), '1');
    assert.deepEqual(await (await fetch(`${base}/api/health/db`)).json(), { ok: true });
  });

  it('registers, creates an agent and reads it back over HTTP', async () => {
    const reg = await fetch(`${base}/api/auth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'e2e@example.com', password: 'e2e-password' }),
    });
    assert.equal(reg.status, 201);
    const { accessToken } = (await reg.json()) as { accessToken: string };
    const auth = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' };
    const created = await fetch(`${base}/api/agents`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'over http' }) });
    assert.equal(created.status, 201);
    const agent = (await created.json()) as { id: string };
    const read = await fetch(`${base}/api/agents/${agent.id}`, { headers: auth });
    assert.equal(((await read.json()) as { name: string }).name, 'over http');
    assert.equal((await fetch(`${base}/api/agents/${agent.id}`)).status, 401);
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
    const [apiExit, workerExit] = await Promise.all([api.stop('SIGTERM'), worker.stop('SIGTERM')]);
    assert.equal(apiExit, 0, api.output());
    assert.equal(workerExit, 0, worker.output());
  });
});
