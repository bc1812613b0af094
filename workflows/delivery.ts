import { ActivityFailure, condition, defineSignal, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DELIVERY_TASK_QUEUE, SLOT_FREED_SIGNAL, SLOT_WAIT_MS } from '../engine/temporal/names';
import { ATTEMPT_HEARTBEAT_TIMEOUT, ATTEMPT_RETRY, ENGINE_RETRY, reasonOf } from './retry-policies';
import type { AttemptOutcome, DeliveryInput } from '../engine/contract';

export const slotFreed = defineSignal(SLOT_FREED_SIGNAL);

/**
 * One delivery of an event to a webhook, id `delivery:<deliveryId>`: an attempt after each delay of
 * the retry schedule until one succeeds, the last fails, or the delivery is cancelled. Each attempt is
 * an activity limited to the attempt timeout, on the delivery task queue (its own worker slots); an
 * activity that dies (worker killed) stops heartbeating and is retried by Temporal a few times, and the receiver de-duplicates on `webhook-id`. When the webhook already has
 * DELIVERY_CONCURRENCY_PER_WEBHOOK attempts in flight the attempt answers 'wait' without using
 * itself up, and the delivery waits for the `slotFreed` signal of an attempt that ends (or, as a
 * safety net, SLOT_WAIT_MS), then asks again. An attempt that fails for good fails the delivery.
 * A failed attempt answers the delay before the next one: the schedule's, or later when the endpoint
 * answered 429/503 with a Retry-After asking for more (capped at 24 h; engine/deliveries/attempts.ts).
 *
 * Determinism: every delay is the schedule's or an attempt's recorded answer, so a history begun before
 * attempts answered delays (its answers are plain 'retry') replays to the same commands: no patch is
 * needed (test/workflows/delivery-replay.test.ts replays one). The answer is asked for (`answerDelay`), so
 * during a rolling deploy an older workflow is never handed one it does not know, and an older
 * activity's plain 'retry' keeps the schedule.
 */
export async function deliverWebhookWorkflow(input: DeliveryInput): Promise<AttemptOutcome> {
  const { attemptDelivery } = proxyActivities<Activities>({
    // Outbound HTTP on its own workers' slots: a slow endpoint never holds the slots fires need.
    taskQueue: DELIVERY_TASK_QUEUE,
    startToCloseTimeout: input.timeoutMs + 5_000,
    // The attempt heartbeats: a worker killed mid-attempt is noticed in seconds, not at the time limit.
    heartbeatTimeout: ATTEMPT_HEARTBEAT_TIMEOUT,
    retry: ATTEMPT_RETRY,
  });
  const { failDelivery } = proxyActivities<Activities>({ startToCloseTimeout: '15 seconds', retry: ENGINE_RETRY });
  let signalled = false;
  setHandler(slotFreed, () => {
    signalled = true;
  });

  // The delay before the next attempt when its previous attempt chose it (the first: chosen before the start).
  let chosenDelay = input.firstDelayMs;

  try {
    for (let i = input.startAt ?? 0; i < input.delaysMs.length; i++) {
      const delay = chosenDelay ?? input.delaysMs[i]!;
      chosenDelay = undefined;
      if (delay > 0) await sleep(delay);
      for (;;) {
        // Cleared before asking: a signal sent while the attempt runs is for this wait.
        signalled = false;
        const answer = await attemptDelivery({
          deliveryId: input.deliveryId,
          generation: input.generation,
          attempt: i + 1,
          nextDelayMs: input.delaysMs[i + 1] ?? null,
          timeoutMs: input.timeoutMs,
          answerDelay: true,
        });
        if (answer === 'wait') {
          await condition(() => signalled, SLOT_WAIT_MS);
          continue;
        }
        if (typeof answer === 'object') {
          chosenDelay = answer.delayMs;
          break;
        }
        if (answer !== 'retry') return answer;
        break;
      }
    }
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    await failDelivery({ deliveryId: input.deliveryId, generation: input.generation, error: reasonOf(err) });
    return 'failed';
  }
  return 'failed';
}
