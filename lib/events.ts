/** The event catalog (DESIGN §4 Events): the types webhooks subscribe to and triggers listen for. */
export const EVENT_TYPES = [
  'agent.created',
  'agent.updated',
  'agent.deleted',
  'agent.triggered',
  'agent.completed',
  'agent.failed',
  'trigger.fired',
  'webhook.received',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Subscribes an outgoing webhook to every type, present and future. */
export const ALL_EVENTS = '*';
