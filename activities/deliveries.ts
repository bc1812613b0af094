import { whileHeartbeating, type AttemptAnswer, type AttemptInput } from '../engine';
import type { ActivityDeps } from './deps';

export type { AttemptInput };

/** The activities of deliverWebhookWorkflow (workflows/delivery.ts); the attempt itself is engine/deliveries/attempts.ts. */
export function createDeliveryActivities(deps: ActivityDeps) {
  const attempts = deps.deliveries;
  return {
    /**
     * One attempt of a delivery (engine/deliveries/attempts.ts), heartbeating while it runs: a worker killed
     * mid-attempt is noticed within the heartbeat timeout and the attempt made again, with the same
     * webhook-id.
     */
    async attemptDelivery(input: AttemptInput): Promise<AttemptAnswer> {
      // The activity's cancellation (the worker shutting down past SHUTDOWN_GRACE_MS) cuts the request.
      return whileHeartbeating((signal) => attempts.attempt(input, signal));
    },

    /**
     * The delivery workflow's last word when attemptDelivery failed for good (every Temporal retry): the
     * delivery fails with the reason, and its slot or place in line is given back.
     */
    async failDelivery(input: { deliveryId: string; generation: number; error: string }): Promise<void> {
      await attempts.failForGood(input);
    },
  };
}
