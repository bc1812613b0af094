/**
 * First attempts waiting in this process for a slot at their webhook (engine/deliveries/first-attempts.ts), so that
 * an attempt ending in this process wakes them at once, without Temporal (engine/deliveries/attempts.ts
 * `releaseSlot`). Their place in line is the slot table's (db/repositories/deliveries.ts): a waiter
 * that is told only asks the table again, and takes a slot only when the line lets it.
 *
 * Slots freed by another process are found by polling: every SLOT_POLL_MS the oldest waiter of each
 * webhook here asks again (one question per webhook, not per waiter), and one that then takes a slot
 * passes the turn to the next (more than one slot may have come free).
 */
export const SLOT_POLL_MS = 100;

export type WakeReason = 'released' | 'poll' | 'timeout';

interface Group {
  waiters: Set<SlotWaiter>;
  timer: NodeJS.Timeout;
  /** When a slot of the webhook was last given back in this process, or taken by a waiter here after a poll. */
  movedAt: number;
}

const keyOf = (s: { deliveryId: string; generation: number }) => `${s.deliveryId}:${s.generation}`;

/** The waiters of one process: by delivery (to wake one) and by webhook (to poll each webhook's line once). */
interface Registry {
  byKey: Map<string, SlotWaiter>;
  byWebhook: Map<string, Group>;
}

export class SlotWaiter {
  private told: WakeReason | null = null;
  private resolve: ((r: WakeReason) => void) | null = null;
  private webhookId: string | null = null;

  constructor(
    private readonly registry: Registry,
    private readonly key: string,
  ) {}

  /** Wakes the waiter (or makes its next `next` return at once). */
  tell(reason: WakeReason): void {
    if (this.resolve) {
      const r = this.resolve;
      this.resolve = null;
      r(reason);
    } else if (this.told !== 'released') this.told = reason;
  }

  /** From now on the waiter is polled with the other waiters of this webhook here. */
  join(webhookId: string): void {
    if (this.webhookId) return;
    this.webhookId = webhookId;
    const { byWebhook } = this.registry;
    let group = byWebhook.get(webhookId);
    if (!group) {
      const g: Group = { waiters: new Set(), timer: setInterval(() => g.waiters.values().next().value?.tell('poll'), SLOT_POLL_MS), movedAt: 0 };
      g.timer.unref();
      byWebhook.set(webhookId, (group = g));
    }
    group.waiters.add(this);
  }

  /** When the webhook's line last moved here (0: not since this waiter joined it). */
  lineMovedAt(): number {
    return (this.webhookId && this.registry.byWebhook.get(this.webhookId)?.movedAt) || 0;
  }

  /** Until told (why) or `ms` have passed ('timeout'). */
  next(ms: number): Promise<WakeReason> {
    if (this.told) {
      const r = this.told;
      this.told = null;
      return Promise.resolve(r);
    }
    return new Promise<WakeReason>((resolve) => {
      const timer = setTimeout(() => {
        this.resolve = null;
        resolve('timeout');
      }, ms);
      this.resolve = (r) => {
        clearTimeout(timer);
        resolve(r);
      };
    });
  }

  /** No longer waiting; `passTurn`: it took a slot after a poll, so the next waiter of its webhook asks too. */
  end(passTurn = false): void {
    const { byKey, byWebhook } = this.registry;
    if (byKey.get(this.key) === this) byKey.delete(this.key);
    if (!this.webhookId) return;
    const group = byWebhook.get(this.webhookId);
    if (!group) return;
    group.waiters.delete(this);
    if (passTurn) group.movedAt = Date.now();
    if (group.waiters.size === 0) {
      clearInterval(group.timer);
      byWebhook.delete(this.webhookId);
    } else if (passTurn) group.waiters.values().next().value?.tell('poll');
  }
}

/**
 * The slot waits of one process (engine/compose.ts builds one): the first attempts that wait here and the
 * attempts that end here share it, so an attempt ending in this process wakes the waiter at once.
 */
export function createSlotWaits() {
  const registry: Registry = { byKey: new Map(), byWebhook: new Map() };
  return {
    /** A first attempt that may have to wait: registered before it asks for a slot, so no wake-up is missed. */
    slotWaiter(slot: { deliveryId: string; generation: number }): SlotWaiter {
      const key = keyOf(slot);
      const waiter = new SlotWaiter(registry, key);
      registry.byKey.set(key, waiter);
      return waiter;
    },

    /** Tells the delivery's waiter in this process that a slot may be free; false when none waits here. */
    wakeSlotWaiter(slot: { deliveryId: string; generation: number }): boolean {
      const waiter = registry.byKey.get(keyOf(slot));
      waiter?.tell('released');
      return waiter !== undefined;
    },

    /** A slot of the webhook was given back in this process: its waiters here see their line move. */
    slotFreedHere(webhookId: string): void {
      const group = registry.byWebhook.get(webhookId);
      if (group) group.movedAt = Date.now();
    },

    /** Waiters in this process (tests). */
    slotWaitersHere(): number {
      return registry.byKey.size;
    },
  };
}
export type SlotWaits = ReturnType<typeof createSlotWaits>;
