import { createEventDispatchRepository, createEventsRepository, type EventRow } from '../../db/repositories/events';
import { createTriggersRepository, type EventTriggerRow } from '../../db/repositories/triggers';
import { listensForTriggers } from '../../db/repositories/event-listeners';
import { FANOUT_WORK_UNITS, filterChecks } from './fan-out';
import { matchEventFilters } from '../../lib/event-filter';
import { regexThread } from '../../lib/regex-thread';
import type { EventMatchingInput, FanOutResult } from '../contract';
import type { Db } from '../../db/pool';
import type { EventFanOut } from './fan-out';
import type { Transaction } from '../unit';

/**
 * The candidates whose filters the event meets, in order, and the ones left unevaluated when the budget
 * ran out (FANOUT_WORK_UNITS, or the account's share of the matching thread). Runs outside any
 * transaction; long values are matched on the process's matching thread in the account's turn, and the
 * event loop is yielded every few milliseconds (lib/event-filter.ts), so one event with many filters never
 * holds the worker (or a database connection) while it is matched.
 */
async function matchingTriggers(candidates: EventTriggerRow[], event: EventRow): Promise<{ matched: EventTriggerRow[]; unevaluated: EventTriggerRow[] }> {
  const { matches } = await matchEventFilters(filterChecks(candidates, event), {
    maxUnits: FANOUT_WORK_UNITS,
    thread: { regex: regexThread(), accountId: event.account_id },
  });
  return { matched: candidates.filter((_, i) => matches[i] === true), unevaluated: candidates.slice(matches.length) };
}

const NOTHING: FanOutResult = { deliveries: 0, fires: 0, overBudget: 0, unevaluated: 0 };

/**
 * The worker's matching of the events whose listening filters were too costly to match where they were
 * written (`matchEventWorkflow`, workflows/event-matching.ts; its activities: activities/event-matching.ts).
 * Its write is a unit of work (engine/unit.ts): the deliveries it writes get their first attempt as any
 * event's do (engine/compose.ts), and what it queued is handed off after the commit.
 */
export function createEventMatching(deps: { db: Db; fanOut: EventFanOut; transaction: Transaction }) {
  const { db, fanOut, transaction } = deps;
  const triggers = createTriggersRepository(db);
  const dispatches = createEventDispatchRepository(db);
  const events = createEventsRepository(db);

  /**
   * The fan-out of an event whose listening filters were too costly to match where it was written
   * (engine/events/fan-out.ts, INLINE_MATCH_UNITS), once:
   * 1. read the event and the enabled triggers listening for its type;
   * 2. match their filters, outside any transaction, within FANOUT_WORK_UNITS;
   * 3. in one short transaction: its deliveries if not written yet (an event queued by an earlier
   *    release; unique per event and webhook, so none twice), a fire per matching trigger, as many
   *    as the chain's CHAIN_FIRE_BUDGET still allows, and a `skipped` fire (reason `filter_budget`) per
   *    trigger whose filter was not evaluated; the outcome is kept on the event, so a retry after the
   *    commit makes nothing again.
   */
  async function matchEvent(input: EventMatchingInput): Promise<FanOutResult> {
    const event = await events.findEvent(input.eventId);
    if (!event) return NOTHING;
    const candidates = listensForTriggers(event) ? await triggers.listEventTriggers(event.account_id, event.type) : [];
    const { matched, unevaluated } = await matchingTriggers(candidates, event);

    return transaction(async (tx, unit): Promise<FanOutResult> => {
      const earlier = await dispatches.lockDispatch(event.id, tx);
      if (!earlier) return NOTHING;
      if (earlier.status === 'done' && earlier.result) return earlier.result;
      const written = await fanOut.writeDeliveries(tx, event);
      const deliveries = (earlier.result?.deliveries ?? 0) + written.length;
      await fanOut.recordUnevaluated(tx, event, unevaluated);
      const outcome = { deliveries, ...(await fanOut.queueFires(tx, event, matched)), unevaluated: unevaluated.length };
      await dispatches.markDispatched(event.id, outcome, tx);
      if (written.length > 0 || outcome.fires > 0) unit.queued(fanOut.heldOf(written));
      return outcome;
    });
  }

  return {
    matchEvent,

    /**
     * The event-matching workflow's last word when matchEvent failed for good: the event shows it
     * (`dispatch_status = 'failed'`, the reason), instead of being silently lost.
     */
    async failEventMatching(input: { eventId: string; error: string }): Promise<void> {
      await dispatches.markDispatchFailed(input.eventId, input.error);
    },
  };
}
export type EventMatching = ReturnType<typeof createEventMatching>;
