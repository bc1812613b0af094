import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { TASK_QUEUE, workflowIds } from '../../engine/temporal/names';
import { WORKFLOW_TYPES } from '../../engine/contract';
import type { RetentionResult } from '../../workflows/retention';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { seedRetentionRows } from '../helpers/retention-rows';

/** The Schedule `system:retention` and its workflow, on the real dev server and Postgres (docs/operations.md § Retention). */
describe('retention on the engine', () => {
  const days = 7;
  const suite = suiteContext();
  let h: EngineHarness;
  const schedule = () => h.engine.client.schedule.getHandle(workflowIds.retention);

  before(async () => {
    h = await startEngine(suite, __filename, { RETENTION_DAYS: String(days) });
  });

  it('the worker creates the hourly schedule system:retention, and the reconciler leaves it alone', async () => {
    const description = await schedule().describe();
    assert.equal(description.action.type, 'startWorkflow');
    assert.equal(description.action.workflowType, WORKFLOW_TYPES.retention);
    assert.equal(description.action.taskQueue, TASK_QUEUE);
    assert.deepEqual(description.spec.intervals?.map((i) => i.every), [3_600_000], 'every hour');
    assert.equal(description.policies.overlap, ScheduleOverlapPolicy.SKIP);
    assert.equal(description.state.paused, false);

    assert.equal(await h.engine.sweep(), 0, 'the sweep finds nothing to sync');
    await h.engine.handOff.drain();
    const { rowCount } = await h.db.query(`SELECT 1 FROM outbox WHERE payload::text LIKE '%retention%'`);
    assert.equal(rowCount, 0, 'nothing queued for it');
    await schedule().describe();
  });

  it('a run deletes what is older than RETENTION_DAYS and keeps the young, the pending and the running', async () => {
    const seed = await seedRetentionRows(h.db, days);
    await schedule().trigger();
    const workflowId = await waitFor('the schedule starts its workflow', async () => {
      const action = (await schedule().describe()).info.recentActions.at(-1);
      return action?.action.workflow.workflowId;
    }, 20_000);
    assert.ok(workflowId.startsWith(`${workflowIds.retention}-`), workflowId);
    const result: RetentionResult = await h.engine.client.workflow.getHandle(workflowId).result();
    assert.deepEqual(result, {
      deliveries: 3, fires: 1, runs: 2, events: 4, hook_receipts: 1, idempotency_keys: 1, rate_limits: 1, refresh_tokens: 2,
      missed_fires: 1, schedule_corrections: 1, recoveries: 2, thread_messages: 2, schedule_history: 1,
      usage_days: 0, // none of the seeded days is USAGE_RETENTION_DAYS old (test/db/retention-deletes.test.ts prunes them)
    });
    assert.deepEqual(await seed.present(), seed.kept);
    assert.deepEqual(await seed.youngFireLinks(), { run_id: null, event_id: null });
  });

  it("a worker starting again rewrites the schedule in place and keeps an operator's pause", async () => {
    await schedule().pause('paused by an operator');
    await h.stopWorker();
    await h.startWorker();
    const description = await schedule().describe();
    assert.equal(description.state.paused, true);
    assert.equal(description.state.note, 'paused by an operator');
    await schedule().unpause();
  });
});
