import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { TASK_QUEUE, WORKFLOW_TYPES, workflowIds } from '../engine';

/**
 * The Schedule `system:retention`: retentionWorkflow every hour, on the hour. One run at a time (a run
 * still working off a backlog makes the next one skip), and no catching up after an outage: the next
 * run deletes whatever the missed ones would have. It belongs to no account, so it carries no search
 * attributes, and the reconciler, which only compares `trigger:*` schedules with Postgres, leaves it alone.
 */
export function retentionScheduleOptions(): ScheduleOptions {
  return {
    scheduleId: workflowIds.retention,
    spec: { intervals: [{ every: '1 hour' }] },
    action: {
      type: 'startWorkflow',
      workflowType: WORKFLOW_TYPES.retention,
      workflowId: workflowIds.retention,
      taskQueue: TASK_QUEUE,
      args: [],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    state: { note: 'deletes rows older than RETENTION_DAYS (README: Retention)' },
  };
}

/**
 * Creates the schedule, or rewrites it to the current definition, when a worker starts; idempotent, so
 * every worker may do it. A pause set by an operator (Temporal UI or CLI) is kept.
 */
export async function ensureRetentionSchedule(client: Client): Promise<'created' | 'updated'> {
  const options = retentionScheduleOptions();
  try {
    await client.schedule.create(options);
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const { scheduleId, state: _state, ...definition } = options;
  await client.schedule.getHandle(scheduleId).update((current) => ({ ...definition, state: current.state }));
  return 'updated';
}
