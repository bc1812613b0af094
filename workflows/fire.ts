import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { fireKeyOf } from '../lib/temporal-names';
import type { FireInput, FireOutcome } from './types';

const { recordFire } = proxyActivities<Activities>({
  // Generous: a thousand schedules firing in the same second queue up behind the database pool.
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * One fire of a trigger, id `fire:<triggerId>:<fireKey>`: started by the trigger's Schedule
 * (`schedule-<time>`), `POST …/fire` (`manual-<id>`), its hook (`hook-<id>`) or a matching event
 * (`event-<eventId>`). The activity records it once (unique fire key), counts it, emits
 * agent.triggered / trigger.fired and queues the linked agent's run.
 */
export async function fireTriggerWorkflow(input: FireInput): Promise<FireOutcome> {
  const fireKey = fireKeyOf(workflowInfo().workflowId, input.triggerId);
  return recordFire({ ...input, fireKey });
}
