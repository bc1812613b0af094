import type { Client } from '@temporalio/client';
import type { Db } from '../db/pool';
import { createOutboxRepository } from '../db/repositories/outbox';
import type { Config } from './config';
import { createDeliveryAttempts } from './delivery-attempts';
import { parseDuration } from './durations';
import type { SecretBox } from './secrets';

/** A delivery written with its workflow start held back (startDelivery's holdMs), for its writer to attempt first. */
export interface FirstAttempt {
  deliveryId: string;
  /** The held outbox row of its `delivery:<id>` workflow start. */
  outboxId: number;
}

/**
 * How long a delivery's workflow start is held back while the process that wrote it makes the first
 * attempt; renewed every RENEW_EVERY_MS while the attempt runs. A process that dies mid-attempt stops
 * renewing: the start is handed off this long after at most, and the workflow makes the attempt again
 * (same webhook-id: receivers de-duplicate).
 */
export const FIRST_ATTEMPT_HOLD_MS = 5_000;
const RENEW_EVERY_MS = 2_000;

/**
 * The first attempt of a delivery, made right where the delivery was written, after the commit, without
 * Temporal: a delivery whose first attempt succeeds (or fails for good, or finds the delivery settled)
 * never starts a workflow; its held workflow start is dropped. A workflow starts only for what must wait:
 * - the attempt failed and more remain: the start is released to begin at the second attempt, after
 *   its delay (the workflow's timer): the schedule's, or the endpoint's Retry-After when later;
 * - the webhook has DELIVERY_CONCURRENCY_PER_WEBHOOK attempts in flight: released as it is, and the
 *   workflow waits for a slot (nothing was sent);
 * - this process already has DELIVERY_WORKER_SLOTS first attempts in flight (slow endpoints), or the
 *   attempt itself failed (the database was unreachable): released, the workflow attempts.
 * Attempts are the same as the workflow's (lib/delivery-attempts.ts): signed, SSRF-checked, recorded,
 * within the webhook's concurrency.
 */
export function createFirstAttempts(deps: { db: Db; config: Config; secrets: SecretBox; client: Client; kick: () => void; log: (msg: string, err?: unknown) => void }) {
  const { config, log } = deps;
  const attempts = createDeliveryAttempts(deps);
  const outbox = createOutboxRepository(deps.db);
  const delaysMs = config.webhooks.retrySchedule.map(parseDuration);
  const running = new Set<Promise<void>>();
  let inFlight = 0;

  async function release(held: FirstAttempt, firstArg: Record<string, unknown> = {}): Promise<void> {
    await outbox.releaseHeld(held.outboxId, firstArg);
    deps.kick();
  }

  async function attemptFirst(held: FirstAttempt): Promise<void> {
    if (inFlight >= config.webhooks.workerSlots) return release(held);
    inFlight++;
    const renew = setInterval(() => outbox.hold(held.outboxId, FIRST_ATTEMPT_HOLD_MS).catch(() => {}), RENEW_EVERY_MS);
    try {
      const step = await attempts.attempt({
        deliveryId: held.deliveryId,
        generation: 0,
        attempt: 1,
        nextDelayMs: delaysMs[1] ?? null,
        timeoutMs: config.webhooks.timeoutMs,
        answerDelay: true,
      });
      clearInterval(renew);
      // Its workflow waits the delay this attempt chose (the schedule's, or the endpoint's Retry-After).
      if (typeof step === 'object') await release(held, { startAt: 1, firstDelayMs: step.delayMs });
      else if (step === 'retry') await release(held, { startAt: 1 });
      else if (step === 'wait') await release(held);
      else await outbox.complete([held.outboxId]); // succeeded, failed for good, or no longer ours to attempt
    } catch (err) {
      clearInterval(renew);
      log(`first attempt of delivery ${held.deliveryId} failed; its workflow takes over`, err);
      await release(held).catch(() => {}); // else its hold runs out and the reconciler hands it off
    } finally {
      inFlight--;
    }
  }

  return {
    /** Whether a delivery's first attempt can be made at once: the retry schedule's first delay is 0. */
    immediate: (delaysMs[0] ?? 0) === 0,

    /** After the commit that wrote these deliveries: their first attempts, in the background. */
    make(held: FirstAttempt[]): void {
      for (const h of held) {
        const p: Promise<void> = attemptFirst(h).finally(() => running.delete(p));
        running.add(p);
      }
    },

    /** Resolves when no first attempt is in flight (tests, shutdown). */
    async idle(): Promise<void> {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
export type FirstAttempts = ReturnType<typeof createFirstAttempts>;
