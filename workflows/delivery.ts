import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { AttemptOutcome, DeliveryInput } from './types';

/**
 * One delivery of an event to a webhook, id `delivery:<deliveryId>`: an attempt after each delay of
 * the retry schedule until one succeeds, the last fails, or the delivery is cancelled. Each attempt is
 * an activity limited to the attempt timeout; an activity that dies (worker killed) is retried by
 * Temporal, and the receiver de-duplicates on `webhook-id`.
 */
export async function deliverWebhookWorkflow(input: DeliveryInput): Promise<AttemptOutcome> {
  const { attemptDelivery } = proxyActivities<Activities>({
    startToCloseTimeout: input.timeoutMs + 5_000,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  for (let i = 0; i < input.delaysMs.length; i++) {
    const delay = input.delaysMs[i]!;
    if (delay > 0) await sleep(delay);
    const outcome = await attemptDelivery({
      deliveryId: input.deliveryId,
      generation: input.generation,
      attempt: i + 1,
      nextDelayMs: input.delaysMs[i + 1] ?? null,
      timeoutMs: input.timeoutMs,
    });
    if (outcome !== 'retry') return outcome;
  }
  return 'failed';
}
