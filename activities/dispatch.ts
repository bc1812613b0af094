import { withTransaction } from '../db/pool';
import { createDeliveriesRepository } from '../db/repositories/deliveries';
import { createEventDispatchRepository, findEvent, type EventRow } from '../db/repositories/events';
import { createTriggersRepository, type EventTriggerRow } from '../db/repositories/triggers';
import { createWebhooksRepository } from '../db/repositories/webhooks';
import { parseDuration } from '../lib/durations';
import { startDelivery, startEventFire } from '../lib/engine-starts';
import { matchEventFilters, REGEX_WORK_BUDGET } from '../lib/event-filter';
import { MAX_CHAIN_DEPTH } from '../lib/temporal-names';
import type { DispatchResult } from '../workflows/types';
import type { ActivityDeps } from './deps';

/**
 * What one event's filters may cost in all (docs/architecture.md § Limits and fairness): as many `$regex` work units as 100 filters at
 * their limit (REGEX_WORK_BUDGET each, ~10 ms at worst), so an event costs at most ~1 s of matching,
 * however many triggers listen. Filters beyond it are not evaluated, and the event's dispatch says how many.
 */
export const FANOUT_WORK_UNITS = 100 * REGEX_WORK_BUDGET;

/**
 * The candidates whose filters the event meets, in order, and how many were left unevaluated when the
 * budget ran out. agent_output triggers match their filter against the run's output, the others
 * against the event's data. Runs outside any transaction and yields to the event loop every few
 * milliseconds (lib/event-filter.ts), so one event with many filters never holds the worker (or a
 * database connection) while it is matched.
 */
async function matchingTriggers(candidates: EventTriggerRow[], event: EventRow): Promise<{ matched: EventTriggerRow[]; unevaluated: number }> {
  const checks = candidates.map((t) => ({
    filter: t.config_json.eventFilter ?? {},
    data: t.type === 'agent_output' ? event.data.output : event.data,
  }));
  const { matches } = await matchEventFilters(checks, { maxUnits: FANOUT_WORK_UNITS });
  return { matched: candidates.filter((_, i) => matches[i] === true), unevaluated: candidates.length - matches.length };
}

const NOTHING: DispatchResult = { deliveries: 0, fires: 0, overBudget: 0, unevaluated: 0 };

const agentOf = (e: EventRow) => (typeof e.data.agentId === 'string' ? e.data.agentId : null);

export function createDispatchActivities(deps: ActivityDeps) {
  const { db, config, handOff } = deps;
  const deliveries = createDeliveriesRepository(db);
  const webhooks = createWebhooksRepository(db);
  const triggers = createTriggersRepository(db);
  const dispatches = createEventDispatchRepository(db);
  const retrySchedule = { delaysMs: config.webhooks.retrySchedule.map(parseDuration), timeoutMs: config.webhooks.timeoutMs };

  return {
    /**
     * Fans one event out, once (docs/architecture.md § When an event is emitted):
     * 1. read the event and the enabled triggers listening for its type (none when it is a
     *    webhook.test, or already at MAX_CHAIN_DEPTH: a cycle of triggers stops there);
     * 2. match their filters, outside any transaction, within FANOUT_WORK_UNITS;
     * 3. in one short transaction: a delivery row per subscribed enabled outgoing webhook (unique per
     *    event and webhook; its triggerCount counted only with a new row) and a fire per matching
     *    trigger, as many as the chain's CHAIN_FIRE_BUDGET still allows (taken atomically from the
     *    root event), each started as its own workflow; the outcome is kept on the event, so a
     *    retry after the commit makes nothing again.
     */
    async fanOutEvent(input: { eventId: string }): Promise<DispatchResult> {
      const event = await findEvent(db, input.eventId);
      if (!event) return NOTHING;
      const listens = event.target_webhook_id === null && event.chain_depth < MAX_CHAIN_DEPTH;
      const candidates = listens ? await triggers.listEventTriggers(event.account_id, event.type) : [];
      const { matched, unevaluated } = await matchingTriggers(candidates, event);

      const result = await withTransaction(db, async (tx): Promise<DispatchResult> => {
        const earlier = await dispatches.lockDispatch(event.id, tx);
        if (!earlier) return NOTHING;
        if (earlier.status === 'done' && earlier.result) return earlier.result;

        const created = await deliveries.createForEvent(event, retrySchedule.delaysMs[0] ?? 0, tx);
        await webhooks.countTriggered(created.map((d) => d.webhook_id), tx);
        for (const d of created) {
          await startDelivery(tx, { id: d.id, accountId: event.account_id, agentId: agentOf(event) }, 0, retrySchedule);
        }

        const granted = matched.length > 0 ? await dispatches.takeChainFires(event.root_event_id, matched.length, config.fires.chainBudget, tx) : 0;
        for (const trigger of matched.slice(0, granted)) await startEventFire(tx, event, trigger);

        const outcome = { deliveries: created.length, fires: granted, overBudget: matched.length - granted, unevaluated };
        await dispatches.markDispatched(event.id, outcome, tx);
        return outcome;
      });
      if (result.deliveries || result.fires) handOff.kick();
      return result;
    },

    /**
     * The dispatch workflow's last word when fanOutEvent failed for good: the event shows it
     * (`dispatch_status = 'failed'`, the reason), instead of being silently lost.
     */
    async markDispatchFailed(input: { eventId: string; error: string }): Promise<void> {
      await dispatches.markDispatchFailed(input.eventId, input.error);
    },
  };
}
