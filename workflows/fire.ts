import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { fireKeyOf } from '../lib/temporal-names';
import { ENGINE_RETRY } from './retry-policies';
import type { FireInput, FireOutcome } from './types';

const { recordFire } = proxyActivities<Activities>({
  // Generous: a thousand schedules firing in the same second queue up behind the database pool.
  startToCloseTimeout: '2 minutes',
  retry: ENGINE_RETRY,
});

/**
 * What happens when a trigger fires. One workflow per fire, id `fire:<triggerId>:<fireKey>`, started
 * (lib/engine-starts.ts) by the trigger's Schedule (`schedule-<time>`, scheduledFireAction),
 * `POST …/fire` or the trigger's hook (`manual-<id>` / `hook-<id>`, startFire), or the dispatch of an
 * event it matches (`event-<eventId>`, startEventFire). Its one activity, recordFire
 * (activities/fires.ts), records the fire once (unique fire key), admits it (skipped, throttled),
 * counts it, starts the linked agent's run and emits agent.triggered / trigger.fired. Its retries are
 * bounded: a fire that fails for good fails this workflow with the reason.
 */
export async function fireTriggerWorkflow(input: FireInput): Promise<FireOutcome> {
  const fireKey = fireKeyOf(workflowInfo().workflowId, input.triggerId);
  return recordFire({ ...input, fireKey });
}
