import { withTransaction } from '../db/pool';
import { createDeliveriesRepository } from '../db/repositories/deliveries';
import { findEvent, type EventRow } from '../db/repositories/events';
import { createTriggersRepository, type EventTriggerRow } from '../db/repositories/triggers';
import { createWebhooksRepository } from '../db/repositories/webhooks';
import { parseDuration } from '../lib/durations';
import { startDelivery, startEventFire } from '../lib/engine-starts';
import { matchesEventFilter } from '../lib/event-filter';
import { MAX_CHAIN_DEPTH } from '../lib/temporal-names';
import type { ActivityDeps } from './deps';

/** agent_output triggers match their filter against the run's output; the others against the event's data. */
export function triggerMatches(trigger: Pick<EventTriggerRow, 'type' | 'config_json'>, event: Pick<EventRow, 'type' | 'data'>): boolean {
  if (trigger.config_json.eventType !== event.type) return false;
  const subject = trigger.type === 'agent_output' ? event.data.output : event.data;
  return matchesEventFilter(trigger.config_json.eventFilter ?? {}, subject);
}

const agentOf = (e: EventRow) => (typeof e.data.agentId === 'string' ? e.data.agentId : null);

export function createDispatchActivities(deps: ActivityDeps) {
  const { db, config, handOff } = deps;
  const deliveries = createDeliveriesRepository(db);
  const webhooks = createWebhooksRepository(db);
  const triggers = createTriggersRepository(db);
  const retrySchedule = { delaysMs: config.webhooks.retrySchedule.map(parseDuration), timeoutMs: config.webhooks.timeoutMs };

  return {
    /**
     * Fans one event out, once: a delivery row per subscribed enabled outgoing webhook (unique per
     * event and webhook; its triggerCount counted only with a new row) and a fire per matching enabled
     * trigger, each started as its own workflow in the same transaction. Fires from an event already
     * at MAX_CHAIN_DEPTH are not made: a cycle of triggers stops there.
     */
    async fanOutEvent(input: { eventId: string }): Promise<{ deliveries: number; fires: number }> {
      const result = await withTransaction(db, async (tx) => {
        const event = await findEvent(tx, input.eventId);
        if (!event) return { deliveries: 0, fires: 0 };

        const created = await deliveries.createForEvent(event, retrySchedule.delaysMs[0] ?? 0, tx);
        await webhooks.countTriggered(created.map((d) => d.webhook_id), tx);
        for (const d of created) {
          await startDelivery(tx, { id: d.id, accountId: event.account_id, agentId: agentOf(event) }, 0, retrySchedule);
        }

        let fires = 0;
        if (event.target_webhook_id === null && event.chain_depth < MAX_CHAIN_DEPTH) {
          const listening = await triggers.listEventTriggers(event.account_id, event.type, tx);
          for (const trigger of listening.filter((t) => triggerMatches(t, event))) {
            await startEventFire(tx, event, trigger);
            fires++;
          }
        }
        return { deliveries: created.length, fires };
      });
      if (result.deliveries || result.fires) handOff.kick();
      return result;
    },
  };
}
