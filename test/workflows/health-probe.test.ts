import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TASK_QUEUE, workflowIds } from '../../lib/temporal-names';
import { startEngine, type EngineHarness } from '../helpers/engine';

describe('worker on the agent-platform task queue (real dev server)', () => {
  let h: EngineHarness;
  before(async () => {
    h = await startEngine(__filename);
  });
  after(() => h.close());

  it('runs the health probe workflow and its database activity', async () => {
    const result = await h.engine.client.workflow.execute('healthProbeWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: workflowIds.healthProbe(randomUUID()),
    });
    assert.equal(result.ok, true);
    assert.equal(result.database, (await h.db.query('SELECT current_database() AS d')).rows[0].d, "ran against this worker's database");
  });
});
