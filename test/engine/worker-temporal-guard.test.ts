import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withTransaction } from '../../db/pool';
import { TemporalCallInsideConnectionError } from '../../engine';
import { startEngine } from '../helpers/engine';
import { suiteContext } from '../helpers/cleanup';

/**
 * docs/architecture.md § Limits and fairness: no Temporal call while a pooled connection is held — the worker's
 * client (over a NativeConnection, which takes no gRPC interceptors) refuses such a call as the API's does.
 */
describe("the worker's Temporal client", () => {
  const suite = suiteContext();

  it('refuses a call made inside a transaction, before it reaches Temporal; the same call outside one is made', async () => {
    const { db, engine } = await startEngine(suite, __filename);
    const client = engine.client;
    await assert.rejects(
      withTransaction(db, async () => client.workflowService.getSystemInfo({})),
      (err: Error) => err instanceof TemporalCallInsideConnectionError && /WorkflowService\.getSystemInfo made while a pooled database connection is held/.test(err.message),
    );
    // The workflow client wraps what its service threw (a ServiceError whose cause it is).
    await assert.rejects(
      withTransaction(db, async () => client.workflow.getHandle('nothing-here').describe()),
      (err: Error) => err.cause instanceof TemporalCallInsideConnectionError,
    );
    const info = await client.workflowService.getSystemInfo({});
    assert.ok(info.serverVersion !== undefined);
  });
});
