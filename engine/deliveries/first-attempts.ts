import type { Db } from '../../db/pool';
import { createOutboxRepository } from '../../db/repositories/outbox';
import type { Config } from '../../lib/config';
import type { DeliveryAttempts } from './attempts';
import type { SlotWaiter, SlotWaits, WakeReason } from './slot-waits';
import type { AttemptAnswer, DeliveryStartPatch } from '../contract';
import type { FirstAttempt } from '../outbox/starts';

/**
 * How long a delivery's workflow start is held back while the process that wrote it makes the first
 * attempt; renewed every RENEW_EVERY_MS while the attempt runs. A process that dies mid-attempt stops
 * renewing: the start is handed off this long after at most, and the workflow makes the attempt again
 * (same webhook-id: receivers de-duplicate).
 */
export const FIRST_ATTEMPT_HOLD_MS = 5_000;
const RENEW_EVERY_MS = 2_000;
/** A first attempt waits for a slot in its process this long at most, however its line moves (then its workflow waits). */
export const FIRST_ATTEMPT_MAX_WAIT_MS = 30_000;

/**
 * The first attempt of a delivery, made right where the delivery was written, after the commit, without
 * Temporal: a delivery whose first attempt succeeds (or fails for good, or finds the delivery settled)
 * never starts a workflow; its held workflow start is dropped. A workflow starts only for what must wait:
 * - the attempt failed and more remain: the start is released to begin at the second attempt, after
 *   its delay (the workflow's timer): the schedule's, or the endpoint's Retry-After when later;
 * - the webhook has DELIVERY_CONCURRENCY_PER_WEBHOOK attempts in flight: the attempt waits for a slot
 *   here first, in the webhook's line (engine/deliveries/slot-waits.ts), while the line moves (docs/architecture.md § One hop per
 *   effect), its held start still renewed; when none came, released as it is, and the workflow waits
 *   for a slot (nothing was sent). At most DELIVERY_FIRST_ATTEMPT_WAITERS wait at once, half of them of
 *   one account; the others are released at once;
 * - this process already has DELIVERY_WORKER_SLOTS first attempts in flight (slow endpoints), or the
 *   attempt itself failed (the database was unreachable): released, the workflow attempts.
 * Attempts are the same as the workflow's (engine/deliveries/attempts.ts): signed, SSRF-checked, recorded,
 * within the webhook's concurrency.
 */
export function createFirstAttempts(deps: {
  db: Db;
  config: Config;
  /** The process's delivery attempts, the same the delivery workflow's activity makes. */
  attempts: DeliveryAttempts;
  slotWaits: SlotWaits;
  kick: () => void;
  log: (msg: string, err?: unknown) => void;
}) {
  const { config, log, attempts, slotWaits } = deps;
  const outbox = createOutboxRepository(deps.db);
  const delaysMs = config.webhooks.retryDelaysMs;
  const running = new Set<Promise<void>>();
  /** First attempts sending (DELIVERY_WORKER_SLOTS), and those waiting for a slot at their webhook. */
  let inFlight = 0;
  let waiting = 0;
  const waitingByAccount = new Map<string, number>();
  const waitersMax = config.webhooks.firstAttemptWaiters;
  /**
   * A line that keeps moving gives a slot back at least once per attempt time limit (WEBHOOK_TIMEOUT_MS): every
   * attempt in flight ends within it. One that has not moved for that long and DELIVERY_FIRST_ATTEMPT_WAIT_MS
   * more has stopped (its slots held by attempts that are not ending: a dead process's leases, say), and its
   * waiters go to their workflows. A slow endpoint's line moves slowly, not never: its waiters stay here,
   * where a wait costs no workflow, no signal and no Temporal round trip.
   */
  const stoppedAfterMs = config.webhooks.timeoutMs + config.webhooks.firstAttemptWaitMs;
  const waiters = new Set<SlotWaiter>();
  /** Set by idle() (shutdown): waiting first attempts hand off to their workflows at once. */
  let closing = false;

  /**
   * The held starts of the first attempts under way here, renewed together every RENEW_EVERY_MS (one
   * statement, however many wait), while there are any. A start found no longer held (a renewal came
   * too late, under load: the hand-off may have started its workflow) is `lost`: its waiter stops at
   * once and sends nothing, and the workflow makes the attempt — never both.
   */
  const renewed = new Map<number, SlotWaiter>();
  const lost = new Set<number>();
  let renewTimer: NodeJS.Timeout | null = null;
  function renew(): void {
    const ids = [...renewed.keys()];
    outbox.hold(ids, FIRST_ATTEMPT_HOLD_MS).then((kept) => {
      const still = new Set(kept);
      for (const id of ids) {
        if (still.has(id) || !renewed.has(id)) continue;
        lost.add(id);
        renewed.get(id)!.tell('released');
      }
    }, () => {}); // unreachable database: the next renewal tells
  }
  function renewing(outboxId: number, waiter: SlotWaiter | null): void {
    if (waiter) renewed.set(outboxId, waiter);
    else renewed.delete(outboxId);
    if (renewed.size > 0 && !renewTimer) {
      renewTimer = setInterval(renew, RENEW_EVERY_MS);
    } else if (renewed.size === 0 && renewTimer) {
      clearInterval(renewTimer);
      renewTimer = null;
    }
  }

  async function release(held: FirstAttempt, patch: DeliveryStartPatch = {}): Promise<void> {
    await outbox.releaseHeld(held.outboxId, patch);
    deps.kick();
  }

  /** A place among the waiters: at most firstAttemptWaiters in the process, half of them for one account. */
  function takeWaitPlace(accountId: string): boolean {
    const mine = waitingByAccount.get(accountId) ?? 0;
    if (config.webhooks.firstAttemptWaitMs === 0 || waiting >= waitersMax || mine >= Math.ceil(waitersMax / 2)) return false;
    waiting++;
    waitingByAccount.set(accountId, mine + 1);
    return true;
  }
  function giveBackWaitPlace(accountId: string): void {
    waiting--;
    const mine = (waitingByAccount.get(accountId) ?? 1) - 1;
    if (mine === 0) waitingByAccount.delete(accountId);
    else waitingByAccount.set(accountId, mine);
  }

  async function attemptFirst(held: FirstAttempt): Promise<void> {
    if (inFlight >= config.webhooks.workerSlots) return release(held);
    inFlight++;
    let counted = true;
    let waitingFor: string | null = null;
    let lastWake: WakeReason | null = null;
    // Registered before the first ask: an attempt ending between that ask and the wait still wakes it.
    const waiter = slotWaits.slotWaiter({ deliveryId: held.deliveryId, generation: 0 });
    renewing(held.outboxId, waiter);
    let step: AttemptAnswer = 'wait';
    try {
      const input = { deliveryId: held.deliveryId, generation: 0, attempt: 1, nextDelayMs: delaysMs[1] ?? null, timeoutMs: config.webhooks.timeoutMs, answerDelay: true };
      const first = await attempts.attemptAt(input);
      step = first.step;
      // No slot at the webhook: wait for one here, briefly, in the webhook's line (not counted among
      // the attempts in flight), woken when an attempt to it ends in this process or by the poll.
      if (step === 'wait' && first.accountId && first.webhookId && takeWaitPlace(first.accountId)) {
        waitingFor = first.accountId;
        inFlight--;
        counted = false;
        waiter.join(first.webhookId);
        const joined = Date.now();
        waiters.add(waiter);
        while (step === 'wait' && !closing) {
          // The budget counts from when the line last moved here: a long line that keeps moving is
          // waited out here (up to FIRST_ATTEMPT_MAX_WAIT_MS), one that stopped goes to its workflows.
          const left = Math.min(joined + FIRST_ATTEMPT_MAX_WAIT_MS, Math.max(joined, waiter.lineMovedAt()) + stoppedAfterMs) - Date.now();
          if (left <= 0) break;
          lastWake = await waiter.next(left);
          if (lost.has(held.outboxId)) break;
          if (lastWake === 'timeout') continue; // the line may have moved meanwhile: the budget is counted again
          if (closing || inFlight >= config.webhooks.workerSlots) break;
          inFlight++;
          counted = true;
          step = (await attempts.attemptAt(input)).step;
          if (step === 'wait') {
            inFlight--;
            counted = false;
          }
        }
      }
      waiters.delete(waiter);
      waiter.end(step !== 'wait' && lastWake === 'poll');
      renewing(held.outboxId, null);
      // Still no slot: released as it is (its place in line is kept), and the workflow waits for one.
      // Its workflow waits the delay this attempt chose (the schedule's, or the endpoint's Retry-After).
      // A start no longer held is the hand-off's: left as it is (nothing was sent while waiting).
      if (lost.delete(held.outboxId) && step === 'wait') return;
      if (typeof step === 'object') await release(held, { startAt: 1, firstDelayMs: step.delayMs });
      else if (step === 'retry') await release(held, { startAt: 1 });
      else if (step === 'wait') await release(held);
      else await outbox.complete([held.outboxId]); // succeeded, failed for good, or no longer ours to attempt
    } catch (err) {
      waiters.delete(waiter);
      waiter.end();
      renewing(held.outboxId, null);
      lost.delete(held.outboxId);
      log(`first attempt of delivery ${held.deliveryId} failed; its workflow takes over`, err);
      await release(held).catch(() => {}); // else its hold runs out and the reconciler hands it off
    } finally {
      if (counted) inFlight--;
      if (waitingFor) giveBackWaitPlace(waitingFor);
    }
  }

  return {
    /** Whether a delivery's first attempt can be made at once: the retry schedule's first delay is 0. */
    immediate: delaysMs[0] === 0,

    /** After the commit that wrote these deliveries: their first attempts, in the background. */
    make(held: FirstAttempt[]): void {
      for (const h of held) {
        const p: Promise<void> = attemptFirst(h).finally(() => running.delete(p));
        running.add(p);
      }
    },

    /** Resolves when no first attempt is in flight (shutdown): those waiting for a slot hand off to their workflows now. */
    async idle(): Promise<void> {
      closing = true;
      for (const w of waiters) w.tell('released');
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
export type FirstAttempts = ReturnType<typeof createFirstAttempts>;
