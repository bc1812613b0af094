import { whileHeartbeating, type EventMatchingInput } from '../engine';
import { regexThread } from '../lib/regex-thread';
import type { ActivityDeps } from './deps';

/** The activities of matchEventWorkflow (workflows/event-matching.ts); the matching is engine/events/matching.ts. */
export function createEventMatchingActivities(deps: ActivityDeps) {
  const { eventMatching } = deps;
  // The matching thread starts with the worker process, not in the middle of an event's fan-out.
  regexThread().start();
  return {
    // Heartbeats while it runs: a worker killed mid-fan-out is noticed within the heartbeat timeout
    // (workflows/event-matching.ts), not at the end of its 30 s limit.
    matchEvent: (input: EventMatchingInput) => whileHeartbeating(() => eventMatching.matchEvent(input)),
    failEventMatching: eventMatching.failEventMatching,
  };
}
