import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { suiteContext } from '../helpers/cleanup';
import { startEngine } from '../helpers/engine';

/** WORKER_WORKFLOW_TASK_SLOTS is the main worker's workflow-task slots (docs/configuration.md). */
describe('worker slots', () => {
  const suite = suiteContext();

  it('the main worker takes WORKER_WORKFLOW_TASK_SLOTS workflow tasks at once', async () => {
    const h = await startEngine(suite, __filename, { WORKER_WORKFLOW_TASK_SLOTS: '3' });
    const supplier = h.engine.worker.options.tuner.workflowTaskSlotSupplier;
    assert.deepEqual(supplier, { type: 'fixed-size', numSlots: 3 });
  });
});
