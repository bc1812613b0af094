import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ENGINE_RETRY, reasonOf } from './retry-policies';
import type { EventMatchingInput, FanOutResult } from '../engine/contract';

const { matchEvent, failEventMatching } = proxyActivities<Activities>({
  // Matching is bounded (FANOUT_WORK_UNITS: milliseconds for most events, up to about a minute of the
  // matching thread for the costliest filters on 1 MiB values, waiting for other accounts' turns besides)
  // and the transaction short; the heartbeat, not this, notices a dead worker.
  startToCloseTimeout: '10 minutes',
  // It heartbeats every second: a worker killed mid-fan-out is noticed in seconds, not at the time limit.
  heartbeatTimeout: '5 seconds',
  retry: ENGINE_RETRY,
});

/**
 * The rest of an event's fan-out, id `event:<eventId>`, for the few events it could not be finished
 * where they were written (engine/events/fan-out.ts): the triggers listening for the event have filters
 * more costly to match than a transaction may spend. Matches them within FANOUT_WORK_UNITS and queues a
 * fire per match (within its chain's budget). When the fan-out fails for good, the event row says so and
 * the workflow fails with the reason: never silently lost, never retried for ever.
 */
export async function matchEventWorkflow(input: EventMatchingInput): Promise<FanOutResult> {
  try {
    return await matchEvent(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = reasonOf(err);
    await failEventMatching({ eventId: input.eventId, error: reason });
    throw ApplicationFailure.create({ message: `the matching of event ${input.eventId} failed for good: ${reason}`, type: 'EventMatchingFailed', nonRetryable: true, cause: err });
  }
}
