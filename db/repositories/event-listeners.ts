import { MAX_CHAIN_DEPTH } from '../../engine/contract';

/**
 * Who listens for an event, as SQL conditions (parameter references given by the caller): the one
 * definition of each, shared by the fan-out's own queries (the deliveries an event creates, the triggers
 * matched against it) and insertEvent's check that nothing listens, which settles such an event in the
 * statement that writes it.
 */

/**
 * The condition on webhook `w` of being delivered an event of `account`, `type` (a webhook.test: only its
 * `target`).
 */
export const subscribedWebhook = (w: string, account: string, type: string, target: string) =>
  `${w}.account_id = ${account} AND ${w}.direction = 'outgoing' AND ${w}.enabled
   AND (CASE WHEN ${target}::uuid IS NOT NULL THEN ${w}.id = ${target}::uuid ELSE ${w}.events && ARRAY[${type}, '*'] END)`;

/** Whether an event is matched against triggers at all: not a webhook.test, not at MAX_CHAIN_DEPTH (a cycle stops there). */
export const listensForTriggers = (event: { target_webhook_id: string | null; chain_depth: number }) =>
  event.target_webhook_id === null && event.chain_depth < MAX_CHAIN_DEPTH;

/** The condition on trigger `t` of listening for events of `account`, `type` (of an event that listensForTriggers). */
export const listeningTrigger = (t: string, account: string, type: string) =>
  `${t}.account_id = ${account} AND ${t}.enabled AND ${t}.type IN ('event', 'agent_finished', 'agent_output')
   AND ${t}.config_json ->> 'eventType' = ${type}`;
