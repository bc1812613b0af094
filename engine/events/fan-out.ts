import type { Queryable } from '../../db/pool';
import { createDeliveriesRepository } from '../../db/repositories/deliveries';
import { listensForTriggers } from '../../db/repositories/event-listeners';
import { createEventDispatchRepository, NOTHING_LISTENS, type EventRow } from '../../db/repositories/events';
import { createFireRateRepository, createFiresRepository } from '../../db/repositories/fires';
import { createTriggersRepository, type EventTriggerRow } from '../../db/repositories/triggers';
import { createWebhooksRepository } from '../../db/repositories/webhooks';
import type { FanOutResult } from '../contract';
import type { Config } from '../../lib/config';
import { startDelivery, startEventFire, startEventMatching, type FirstAttempt } from '../outbox/starts';
import { matchEventFilters, REGEX_WORK_BUDGET, regexUnits } from '../../lib/event-filter';
import { MAX_PROGRAM_SIZE } from '../../lib/re2-cache';
import { inSpan } from '../../lib/tracing/context';

/** The largest JSON body a hook accepts (api/app.ts bodyLimit): the longest value a filter must match in full. */
export const MAX_MATCHED_VALUE = 1024 * 1024;

/**
 * What one event's filters may cost in all, in `$regex` work units (characters × program size): the
 * costliest filter on the longest value (MAX_MATCHED_VALUE × MAX_PROGRAM_SIZE, ~524 million). Filters
 * are started in order while less has been spent, and a filter started is evaluated in full, so any one
 * filter, and several on a value of the largest size, are always evaluated; the ones after it is spent
 * are not, and each gets a `skipped` fire with reason `filter_budget`. What this costs: RE2 runs most
 * patterns at about a nanosecond per byte (an event's 1 MiB value, milliseconds); the patterns that
 * defeat its DFA cost up to ~60 ns per unit, seconds per MiB, on the matching thread (lib/regex-thread.ts),
 * within the account's share of it.
 */
export const FANOUT_WORK_UNITS = MAX_MATCHED_VALUE * MAX_PROGRAM_SIZE;

/**
 * What matching may cost where the event is written, inside its transaction: two filters' worth on the
 * event loop (2 × REGEX_WORK_BUDGET: ≤ ~9 ms at re2js's worst measured ~90 ns per unit, far less for most
 * patterns), counted before any matching from the values' full lengths — so a filter's classic trap, a
 * 5,001-character value under `.*.*.*.*!` (55,011 units), is matched where it is written. Filters without
 * `$regex` cost no units. An event whose listening filters could cost more is matched by the worker
 * instead, outside any transaction, on its matching thread and within FANOUT_WORK_UNITS (`event:<id>`,
 * engine/events/matching.ts), so an account's costly filters never hold an API request, a database
 * connection or another account's fire for long.
 */
export const INLINE_MATCH_UNITS = 2 * REGEX_WORK_BUDGET;

/** What the event's fan-out needs of a listening trigger's filter: its data (agent_output: the run's output). */
export function filterChecks(candidates: EventTriggerRow[], event: Pick<EventRow, 'data'>) {
  return candidates.map((t) => ({
    filter: t.config_json.eventFilter ?? {},
    data: t.type === 'agent_output' ? (event.data as { output?: unknown }).output : event.data,
  }));
}

/** A fire of `trigger` from `event` that does not go ahead (FiresRepository.insertEventFireNotMade). */
const notMade = (event: EventRow, trigger: EventTriggerRow) => ({
  accountId: event.account_id,
  triggerId: trigger.id,
  eventId: event.id,
  chainDepth: event.chain_depth + 1,
  rootEventId: event.root_event_id,
  payload: event.data,
});

/** What an event is about, for the search attributes of the workflows its fan-out starts (the row does not keep it). */
export interface EventAbout {
  agentId?: string | null;
  triggerId?: string | null;
}

/**
 * An event's fan-out, written in the transaction that creates the event (one hop per effect): nothing
 * runs in a workflow of its own between an event and what it causes.
 * 1. a delivery row per subscribed enabled outgoing webhook (or the target webhook of a webhook.test),
 *    its webhook's triggerCount counted, and its delivery workflow queued (startDelivery);
 * 2. the account's enabled triggers listening for the event's type matched against their filters,
 *    when they cost at most INLINE_MATCH_UNITS, and a fire queued per match (startEventFire), as many as the chain's
 *    CHAIN_FIRE_BUDGET still allows (taken atomically from the root event); while the account is over
 *    FIRES_PER_MINUTE, each is recorded `throttled` here instead, with no workflow;
 * 3. the outcome kept on the event (`dispatch_status` done, `dispatch_result`).
 * An event nothing listens for is written done already (insertEvent `settled`): nothing to ask here.
 * When the listening filters could cost more than INLINE_MATCH_UNITS, step 2 is left to the worker: the
 * event's matching is queued (startEventMatching, `event:<id>`) and the event stays undispatched until
 * it has run. Its caller is a unit of work (engine/unit.ts `emit`), which kicks the hand-off after the
 * commit, with the deliveries held for their first attempt (`held`), when the fan-out wrote anything to
 * the outbox (`queued`).
 *
 * `holdMs` (engine/compose.ts decides it, when the process's units make first attempts):
 * each delivery's workflow start is held back that long while the caller's process makes the first
 * attempt itself, after the commit (engine/deliveries/first-attempts.ts); a workflow starts only when
 * that attempt leaves something to wait for. 0: each delivery's workflow starts at once.
 */
export function createEventFanOut(db: Queryable, config: Pick<Config, 'webhooks' | 'fires'>, options: { holdMs?: number } = {}) {
  const fires = createFiresRepository(db);
  const schedule = { delaysMs: config.webhooks.retryDelaysMs, timeoutMs: config.webhooks.timeoutMs };
  const holdMs = options.holdMs ?? 0;

  return {
    /** Webhook retry schedule and attempt limit of the deliveries this fan-out creates. */
    schedule,

    /** Of the deliveries written, the ones whose workflow start is held for their writer's first attempt. */
    heldOf: (written: FirstAttempt[]): FirstAttempt[] => (holdMs > 0 ? written : []),

    /** Deliveries of the event (step 1 above): created once per (event, webhook); the ones created now. */
    async writeDeliveries(tx: Queryable, event: EventRow, about: EventAbout = {}): Promise<FirstAttempt[]> {
      const created = await createDeliveriesRepository(tx).createForEvent(event, schedule.delaysMs[0]!);
      if (created.length === 0) return [];
      await createWebhooksRepository(tx).countTriggered(created.map((d) => d.webhook_id));
      const agentId = about.agentId ?? (typeof event.data.agentId === 'string' ? event.data.agentId : null);
      const written: FirstAttempt[] = [];
      for (const d of created) {
        const outboxId = await startDelivery(tx, { id: d.id, accountId: event.account_id, agentId }, 0, schedule, holdMs);
        written.push({ deliveryId: d.id, outboxId });
      }
      return written;
    },

    /**
     * Fires of the matched triggers (step 2 above), within the chain's budget; returns the outcome. The
     * event row must be locked or new in `tx` (concurrent fan-outs of one chain queue on its root).
     */
    async queueFires(tx: Queryable, event: EventRow, matched: EventTriggerRow[]): Promise<Pick<FanOutResult, 'fires' | 'overBudget'>> {
      if (matched.length === 0) return { fires: 0, overBudget: 0 };
      const granted = await createEventDispatchRepository(tx).takeChainFires(event.root_event_id, matched.length, config.fires.chainBudget);
      // An account already over FIRES_PER_MINUTE: its fires are recorded throttled right here, as their
      // workflows would record them, so a flooding account's fires past its rate cost no workflow each.
      const full = granted > 0 && (await createFireRateRepository(tx).isFull(event.account_id, config.fires.perMinute));
      for (const trigger of matched.slice(0, granted)) {
        const recorded = full && (await fires.insertEventFireNotMade(notMade(event, trigger), { status: 'throttled', reason: 'fires_per_minute' }, tx));
        if (!recorded) await startEventFire(tx, event, trigger);
      }
      return { fires: granted, overBudget: matched.length - granted };
    },

    /**
     * The triggers whose filters were not evaluated within the event's work budget (engine/events/matching.ts):
     * each gets a `skipped` fire with reason `filter_budget` (not counted, no run), so a miss is never silent.
     */
    async recordUnevaluated(tx: Queryable, event: EventRow, unevaluated: EventTriggerRow[]): Promise<void> {
      for (const trigger of unevaluated) await fires.insertEventFireNotMade(notMade(event, trigger), { status: 'skipped', reason: 'filter_budget' }, tx);
    },

    /** The whole fan-out of a new event, in its transaction (see above), in a span of its own (tracing on). */
    fanOutEvent(tx: Queryable, event: EventRow & { settled?: boolean }, about: EventAbout = {}): Promise<FanOutResult & { deferred: boolean; held: FirstAttempt[]; queued: boolean }> {
      return inSpan('event fan-out', { 'event.id': event.id, 'event.type': event.type }, () =>
        this.fanOutNow(tx, event, about).then((r) => ({ ...r, queued: r.deferred || r.deliveries > 0 || r.fires > 0 })),
      );
    },

    /** fanOutEvent's work. */
    async fanOutNow(tx: Queryable, event: EventRow & { settled?: boolean }, about: EventAbout): Promise<FanOutResult & { deferred: boolean; held: FirstAttempt[] }> {
      // Written with nothing listening (insertEvent): its fan-out is done already.
      if (event.settled) return { ...NOTHING_LISTENS, deferred: false, held: [] };
      const written = await this.writeDeliveries(tx, event, about);
      const deliveries = written.length;
      const held = this.heldOf(written);
      const candidates = listensForTriggers(event) ? await createTriggersRepository(tx).listEventTriggers(event.account_id, event.type) : [];
      const dispatches = createEventDispatchRepository(tx);
      if (candidates.length > 0) {
        const checks = filterChecks(candidates, event);
        if (checks.reduce((units, c) => units + regexUnits(c.filter, c.data), 0) > INLINE_MATCH_UNITS) {
          // Too costly to match here: the worker matches them all, within FANOUT_WORK_UNITS.
          const partial: FanOutResult = { deliveries, fires: 0, overBudget: 0, unevaluated: 0 };
          await dispatches.keepPartialResult(event.id, partial);
          await startEventMatching(tx, event, about);
          return { ...partial, deferred: true, held };
        }
        const { matches } = await matchEventFilters(checks);
        const outcome = { deliveries, ...(await this.queueFires(tx, event, candidates.filter((_, i) => matches[i]))), unevaluated: 0 };
        await dispatches.markDispatched(event.id, outcome);
        return { ...outcome, deferred: false, held };
      }
      const outcome = { deliveries, fires: 0, overBudget: 0, unevaluated: 0 };
      await dispatches.markDispatched(event.id, outcome);
      return { ...outcome, deferred: false, held };
    },
  };
}
export type EventFanOut = ReturnType<typeof createEventFanOut>;
