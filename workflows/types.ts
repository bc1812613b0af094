/** Inputs and outcomes shared by workflows and their activities (plain data, no behaviour). */

export type FireSource = 'schedule' | 'manual' | 'webhook' | 'event';

/** Input of `fireTriggerWorkflow`, id `fire:<triggerId>:<fireKey>`. */
export interface FireInput {
  triggerId: string;
  source: FireSource;
  /** Set by the API (manual and hook fires) so it can answer with the fire's id before the fire runs. */
  fireId?: string;
  /** The hook request's JSON, or the event's data, handed to the run as its input. */
  payload?: unknown;
  /** The event that caused an event fire. */
  eventId?: string;
  /** Depth of this fire in a chain (events that led to it); 0 for schedule, manual and hook fires. */
  chainDepth?: number;
}

export interface FireOutcome {
  fireId: string;
  /** 'duplicate': this fire key was already recorded; 'skipped': trigger disabled; 'gone': trigger deleted. */
  status: 'fired' | 'duplicate' | 'skipped' | 'gone';
  runId: string | null;
}

/** Input of `deliverWebhookWorkflow`, id `delivery:<deliveryId>` (or `…:retry-<generation>`). */
export interface DeliveryInput {
  deliveryId: string;
  generation: number;
  /** Delay before each attempt, in ms (WEBHOOK_RETRY_SCHEDULE at hand-off; one 0 for a manual retry). */
  delaysMs: number[];
  /** WEBHOOK_TIMEOUT_MS at hand-off: each attempt's own time limit. */
  timeoutMs: number;
}

/** 'retry': the attempt failed and more remain; 'stopped': cancelled, superseded or deleted. */
export type AttemptOutcome = 'succeeded' | 'retry' | 'failed' | 'stopped';

export interface RunInput {
  runId: string;
}
