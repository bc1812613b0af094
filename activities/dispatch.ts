import { withTransaction } from '../db/pool';
import { findEvent, type EventRow } from '../db/repositories/events';
import { parseDuration } from '../lib/durations';
import { startDelivery, startEventFire } from '../lib/engine-starts';
import { matchesEventFilter, type EventFilter } from '../lib/event-filter';
import { MAX_CHAIN_DEPTH } from '../lib/temporal-names';
import type { ActivityDeps } from './deps';

interface EventTriggerRow {
  id: string;
  agent_id: string | null;
  type: 'event' | 'agent_finished' | 'agent_output';
  config_json: { eventType: string; eventFilter?: EventFilter };
}

/** agent_output triggers match their filter against the run's output; the others against the event's data. */
export function triggerMatches(trigger: Pick<EventTriggerRow, 'type' | 'config_json'>, event: Pick<EventRow, 'type' | 'data'>): boolean {
  if (trigger.config_json.eventType !== event.type) return false;
  const subject = trigger.type === 'agent_output' ? event.data.output : event.data;
  return matchesEventFilter(trigger.config_json.eventFilter ?? {}, subject);
}

const agentOf = (e: EventRow) => (typeof e.data.agentId === 'string' ? e.data.agentId : null);

export function createDispatchActivities(deps: ActivityDeps) {
  const { db, config, handOff } = deps;
  const retrySchedule = { delaysMs: config.webhooks.retrySchedule.map(parseDuration), timeoutMs: config.webhooks.timeoutMs };

  return {
    /**
     * Fans one event out, once: a delivery row per subscribed enabled outgoing webhook (unique per
     * event and webhook; its triggerCount counted only with a new row) and a fire per matching enabled
     * trigger, each handed to its own workflow through the outbox in the same transaction. Fires from an
     * event already at MAX_CHAIN_DEPTH are not made: a cycle of triggers stops there.
     */
    async fanOutEvent(input: { eventId: string }): Promise<{ deliveries: number; fires: number }> {
      const result = await withTransaction(db, async (tx) => {
        const event = await findEvent(tx, input.eventId);
        if (!event) return { deliveries: 0, fires: 0 };

        const { rows: deliveries } = await tx.query<{ id: string; webhook_id: string }>(
          `INSERT INTO deliveries (account_id, webhook_id, event_id, next_attempt_at)
           SELECT w.account_id, w.id, $1, now() + $4 * interval '1 millisecond' FROM webhooks w
           WHERE w.account_id = $2 AND w.direction = 'outgoing' AND w.enabled
             AND (CASE WHEN $5::uuid IS NOT NULL THEN w.id = $5::uuid ELSE w.events && ARRAY[$3, '*'] END)
           ON CONFLICT (event_id, webhook_id) DO NOTHING
           RETURNING id, webhook_id`,
          [event.id, event.account_id, event.type, retrySchedule.delaysMs[0] ?? 0, event.target_webhook_id],
        );
        if (deliveries.length) {
          await tx.query(`UPDATE webhooks SET trigger_count = trigger_count + 1, last_triggered_at = now() WHERE id = ANY($1::uuid[])`, [
            deliveries.map((d) => d.webhook_id),
          ]);
        }
        for (const d of deliveries) {
          await startDelivery(tx, { id: d.id, accountId: event.account_id, agentId: agentOf(event) }, 0, retrySchedule);
        }

        let fires = 0;
        if (event.target_webhook_id === null && event.chain_depth < MAX_CHAIN_DEPTH) {
          const { rows: triggers } = await tx.query<EventTriggerRow>(
            `SELECT id, agent_id, type, config_json FROM triggers
             WHERE account_id = $1 AND enabled AND type IN ('event', 'agent_finished', 'agent_output')
               AND config_json ->> 'eventType' = $2`,
            [event.account_id, event.type],
          );
          for (const trigger of triggers.filter((t) => triggerMatches(t, event))) {
            await startEventFire(tx, event, trigger);
            fires++;
          }
        }
        return { deliveries: deliveries.length, fires };
      });
      if (result.deliveries || result.fires) handOff.kick();
      return result;
    },
  };
}
