/** The event catalog (docs/api.md § Events): the types webhooks subscribe to and triggers listen for. */
export const EVENT_TYPES = [
  'agent.created',
  'agent.updated',
  'agent.deleted',
  'agent.triggered',
  'agent.completed',
  'agent.failed',
  'run.waiting',
  'approval.decided',
  'trigger.fired',
  'trigger.missed',
  'webhook.received',
  'webhook.test',
  'webhook.disabled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Subscribes an outgoing webhook to every type, present and future. */
export const ALL_EVENTS = '*';

/**
 * What an incoming webhook may emit: only what an outsider can truthfully claim, that a request came
 * in. Every other type is reserved for the events the platform itself emits; an outsider emitting
 * `agent.completed` or `trigger.fired` would forge them and could start agent_finished chains.
 * An allow-list, so a type added to the catalog later is reserved unless listed here.
 */
export const INCOMING_WEBHOOK_EVENT_TYPES: readonly string[] = ['webhook.received'];

export const isReservedForPlatform = (type: string) => !INCOMING_WEBHOOK_EVENT_TYPES.includes(type);

/**
 * The types an incoming webhook row actually emits: its events without the reserved ones (a row may
 * hold them if an API instance from before this rule wrote it), never nothing.
 */
export function emittedByIncomingWebhook(events: readonly string[]): string[] {
  const allowed = events.filter((type) => !isReservedForPlatform(type));
  return allowed.length > 0 ? allowed : [INCOMING_WEBHOOK_EVENT_TYPES[0]!];
}
