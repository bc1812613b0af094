import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { TASK_QUEUE, workflowIds } from '../../engine/temporal/names';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';

describe('worker on the agent-platform task queue (real dev server)', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  before(async () => {
    h = await startEngine(suite, __filename);
  });

  it('runs the health probe workflow and its database activity', async () => {
    const result = await h.engine.client.workflow.execute('healthProbeWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: workflowIds.healthProbe(randomUUID()),
    });
    assert.equal(result.ok, true);
    assert.equal(result.database, (await h.db.query('SELECT current_database() AS d')).rows[0].d, "ran against this worker's database");
  });
});
