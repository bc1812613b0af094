import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ENGINE_RETRY, reasonOf } from './retry-policies';
import type { DispatchResult } from './types';

const { fanOutEvent, markDispatchFailed } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: ENGINE_RETRY,
});

/**
 * Dispatch of one event, id `event:<eventId>`: one delivery per subscribed enabled outgoing webhook
 * and one fire per matching enabled trigger (within its chain's budget), each recorded once and
 * handed to its own workflow. When the fan-out fails for good, the event row says so and the
 * workflow fails with the reason: never silently lost, never retried for ever.
 */
export async function dispatchEventWorkflow(input: { eventId: string }): Promise<DispatchResult> {
  try {
    return await fanOutEvent(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = reasonOf(err);
    await markDispatchFailed({ eventId: input.eventId, error: reason });
    throw ApplicationFailure.create({ message: `the fan-out of event ${input.eventId} failed for good: ${reason}`, type: 'DispatchFailed', nonRetryable: true, cause: err });
  }
}
