import { proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { fireKeyOf } from '../engine/contract';
import { ENGINE_RETRY } from './retry-policies';
import type { FireInput, FireOutcome } from '../engine/contract';

const { recordFire } = proxyLocalActivities<Activities>({
  // One attempt's limit: a thousand schedules firing in the same second queue up behind the database
  // pool. A worker that dies mid-attempt is noticed by the workflow task's own timeout, not this one.
  startToCloseTimeout: '1 minute',
  retry: ENGINE_RETRY,
  // Retries that wait longer than this wait on a workflow timer, not inside the worker holding the task.
  localRetryThreshold: '2 seconds',
});

/**
 * What happens when a trigger fires on its own. One workflow per fire, id `fire:<triggerId>:<fireKey>`,
 * started (engine/outbox/starts.ts) by the trigger's Schedule (`schedule-<time>`, scheduledFireAction) or
 * by the fan-out of an event it matches (`event-<eventId>`, startEventFire); a fire asked for by a
 * request (`POST …/fire`, the trigger's hook) is recorded by the API in the request's transaction, with
 * the same recordFire and no workflow (api/services/fire-now.ts). Its one step is a local
 * activity, recordFire (activities/fires.ts, engine/fires/record-fire.ts), run by the worker that runs this
 * workflow's first task, with no round trip through Temporal: it records the fire once (unique fire key), admits it (skipped, throttled), counts
 * it, starts the linked agent's run and emits agent.triggered / trigger.fired with its fan-out. Its
 * retries are bounded: a fire that fails for good fails this workflow with the reason.
 */
export async function fireTriggerWorkflow(input: FireInput): Promise<FireOutcome> {
  const fireKey = fireKeyOf(workflowInfo().workflowId, input.triggerId);
  return recordFire({ ...input, fireKey });
}
