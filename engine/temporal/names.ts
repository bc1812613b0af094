import { defineSearchAttributeKey, SearchAttributeType, type Priority, type SearchAttributePair } from '@temporalio/common';
import { fireKeys, fireWorkflowId, type WorkflowTags } from '../contract';


/** Task queues, workflow-id formats and search attributes live here and nowhere else (docs/architecture.md § Deterministic ids). */
export const TASK_QUEUE = 'agent-platform';
/**
 * Delivery attempts only (outbound HTTP to the accounts' endpoints), served by their own worker with
 * its own slots (DELIVERY_WORKER_SLOTS): slow endpoints can hold those, never the slots fires,
 * fan-outs and runs need on TASK_QUEUE (docs/architecture.md § Limits and fairness).
 */
export const DELIVERY_TASK_QUEUE = 'agent-platform-deliveries';

export const SEARCH_ATTRIBUTES = ['AccountId', 'AgentId', 'TriggerId'] as const;

const keys = {
  AccountId: defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD),
  AgentId: defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD),
  TriggerId: defineSearchAttributeKey('TriggerId', SearchAttributeType.KEYWORD),
};

export function searchAttributePairs(tags: WorkflowTags): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [{ key: keys.AccountId, value: tags.accountId }];
  if (tags.agentId) pairs.push({ key: keys.AgentId, value: tags.agentId });
  if (tags.triggerId) pairs.push({ key: keys.TriggerId, value: tags.triggerId });
  return pairs;
}

/**
 * Every workflow and schedule action is started with its account as its fairness key (docs/architecture.md § Limits and fairness): with
 * fairness on (the dev server's `matching.enableFairness`; a namespace setting on Temporal Cloud),
 * Temporal dispatches a task queue's backlog round-robin across accounts, so one account's burst does
 * not queue everyone else's tasks behind it. Activities inherit their workflow's key.
 */
export function fairnessOf(tags: Pick<WorkflowTags, 'accountId'>, backlog = false): Priority {
  return backlog ? { fairnessKey: tags.accountId, priorityKey: BACKLOG_PRIORITY } : { fairnessKey: tags.accountId };
}

/**
 * The Temporal priority (1 highest … 5; unset is 3) of work from an account's backlog — a parked run
 * given its workflow when a slot of its account freed (engine/runs/run-line.ts): an account already at its
 * concurrency waits behind the fresh work of every account within its share whenever tasks queue.
 */
export const BACKLOG_PRIORITY = 4;


/** Signalled to a delivery waiting for a slot when an attempt to its webhook ends (docs/architecture.md § When a delivery is made). */
export const SLOT_FREED_SIGNAL = 'slotFreed';
/** A delivery waiting for a slot asks again after this long without a signal (a lost signal, an expired lease). */
export const SLOT_WAIT_MS = 30_000;

export const SCHEDULE_ID_PREFIX = 'trigger:';

export const workflowIds = {
  triggerSchedule: (triggerId: string) => `${SCHEDULE_ID_PREFIX}${triggerId}`,
  event: (eventId: string) => `event:${eventId}`,
  /** Generation 0 is the first hand-off; each manual retry is a new generation with its own workflow. */
  delivery: (deliveryId: string, generation = 0) => (generation === 0 ? `delivery:${deliveryId}` : `delivery:${deliveryId}:retry-${generation}`),
  run: (runId: string) => `run:${runId}`,
  /** A recovery of a webhook's failed deliveries (POST /api/webhooks/:id/recover). */
  recovery: (recoveryId: string) => `recovery:${recoveryId}`,
  /** A replay of an agent's failed runs (POST /api/agents/:id/runs/replay). */
  replay: (replayId: string) => `replay:${replayId}`,
  fire: fireWorkflowId,
  /** A schedule's action id; Temporal appends `-<scheduled time>` to each workflow it starts. */
  scheduledFire: (triggerId: string) => fireWorkflowId(triggerId, fireKeys.schedulePrefix),
  healthProbe: (probeId: string) => `health-probe:${probeId}`,
  /** The hourly retention Schedule, and its workflows (Temporal appends `-<scheduled time>`); not a `trigger:*` schedule. */
  retention: 'system:retention',
};
