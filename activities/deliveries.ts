import type { AttemptOutcome } from '../workflows/types';
import type { ActivityDeps } from './deps';

export interface AttemptInput {
  deliveryId: string;
  generation: number;
  /** 1-based index in this generation's schedule. */
  attempt: number;
  /** Delay before the next attempt; null when this is the last one. */
  nextDelayMs: number | null;
  timeoutMs: number;
}

export function createDeliveryActivities(_deps: ActivityDeps) {
  return {
    async attemptDelivery(_input: AttemptInput): Promise<AttemptOutcome> {
      throw new Error('not implemented');
    },
  };
}
