import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { fanOutEvent } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * Dispatch of one event, id `event:<eventId>`: one delivery per subscribed enabled outgoing webhook
 * and one fire per matching enabled trigger, each recorded once and handed to its own workflow.
 */
export async function dispatchEventWorkflow(input: { eventId: string }): Promise<{ deliveries: number; fires: number }> {
  return fanOutEvent(input);
}
