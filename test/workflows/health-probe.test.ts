import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { TASK_QUEUE, workflowIds } from '../../lib/temporal-names';
import { createWorker } from '../../worker/worker';
import { createTestDatabase } from '../helpers/database';
import { testNamespace } from '../helpers/namespace';

const namespace = testNamespace(__filename);

describe('worker on the agent-platform task queue (real dev server)', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let connection: Connection;
  let nativeConnection: NativeConnection;

  before(async () => {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    database = await createTestDatabase();
    const address = process.env.TEMPORAL_ADDRESS!;
    connection = await Connection.connect({ address });
    nativeConnection = await NativeConnection.connect({ address });
  });
  after(async () => {
    await connection.close();
    await nativeConnection.close();
    await database.drop();
  });

  it('runs the health probe workflow and its database activity', async () => {
    const worker = await createWorker({ connection: nativeConnection, namespace, db: database.db });
    const client = new Client({ connection, namespace });
    const result = await worker.runUntil(
      client.workflow.execute('healthProbeWorkflow', { taskQueue: TASK_QUEUE, workflowId: workflowIds.healthProbe(randomUUID()) }),
    );
    assert.equal(result.ok, true);
    assert.equal(result.database, new URL(database.url).pathname.slice(1), 'ran against this worker\'s database');
  });
});
