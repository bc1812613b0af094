import type { ScheduleOptionsAction } from '@temporalio/client';
import type { Priority } from '@temporalio/common';
import type { Queryable } from '../../db/pool';
import type { EventRow } from '../../db/repositories/events';
import { createOutboxInsertsRepository } from '../../db/repositories/outbox';
import { createRunsRepository, type RunRow } from '../../db/repositories/runs';
import { APPROVAL_DECIDED_SIGNAL, fireKeys, WORKFLOW_TYPES, type DeliveryInput, type EventMatchingInput, type FireInput, type RecoveryInput, type ReplayInput, type RunInput, type WorkflowStart, type WorkflowTags } from '../contract';
import { fairnessOf, searchAttributePairs, TASK_QUEUE, workflowIds } from '../temporal/names';
import { traceCarrier } from '../../lib/tracing/context';

/**
 * Every piece of work handed to Temporal is asked for here, and nowhere else (docs/architecture.md). Each verb
 * writes one outbox row inside the caller's transaction, so the work is queued if and only if the
 * change that caused it commits; after the commit the caller kicks `handOff` (engine/outbox/handoff.ts), and the
 * worker's reconciler hands off whatever is left. Each verb builds its workflow's type, id
 * (engine/temporal/names.ts), arguments and search attributes, so a repeated hand-off is a no-op; the
 * hand-off starts each with its account as fairness key (`fairnessOf`), as a schedule's action does.
 *
 * | verb                  | workflow                 | id                                   | asked for by |
 * |-----------------------|--------------------------|--------------------------------------|--------------|
 * | `startDelivery`       | `deliverWebhookWorkflow` | `delivery:<id>` (`…:retry-<n>`)      | an event's fan-out (engine/events/fan-out.ts), a manual retry, a recovery's batch |
 * | `startEventFire`      | `fireTriggerWorkflow`    | `fire:<triggerId>:event-<eventId>`   | an event's fan-out, per matching trigger |
 * | `startEventMatching`  | `matchEventWorkflow`  | `event:<eventId>`                    | an event's fan-out, when its listening filters are too costly to match inline |
 * | `scheduledFireAction` | `fireTriggerWorkflow`    | `fire:<triggerId>:schedule-<time>`   | the trigger's Temporal Schedule (no outbox row: the schedule is synced) |
 * | `startRun`            | `runAgentWorkflow`       | `run:<runId>`                        | `POST /agents/:id/runs`, a fire of a trigger linked to an agent (or parked: engine/runs/run-line.ts) |
 * | `startRunWorkflow`    | `runAgentWorkflow`       | `run:<runId>`                        | `startRun` when the line has room; engine/runs/run-line.ts when a slot frees for a parked run |
 * | `startRecovery`       | `recoverDeliveriesWorkflow` | `recovery:<recoveryId>`           | `POST /webhooks/:id/recover` |
 * | `startReplay`         | `replayRunsWorkflow`     | `replay:<replayId>`                  | `POST /agents/:id/runs/replay` |
 * | `signalApprovalDecided` | (a signal to) `runAgentWorkflow` | `run:<runId>`                   | `POST /approvals/:id/decision` (api/services/approval-service.ts) |
 * | `startScheduleSync`   | the Schedule `trigger:<id>` converges to the row | | the reconciler's sweep, and the database |
 *
 * Schedule syncs are also queued by the database itself: the trigger `triggers_schedule_sync` on the
 * `triggers` table (migration 3) writes the same outbox row on every insert, delete and relevant
 * update of a cron/schedule trigger, so no code path or cascade (deleting an agent deletes its
 * triggers) can change a trigger without its schedule following. Only the reconciler asks explicitly.
 */

/**
 * The outbox's inserts over the caller's transaction. The verbs are free functions of that transaction (no
 * pool of their own to build a repository over once); the repository is a plain object over it.
 */
const outboxOf = (q: Queryable) => createOutboxInsertsRepository(q);

/** Every workflow start is stored with the active trace context (tracing on), so its workflow joins the trace of its cause. */
function insertWorkflowStart(q: Queryable, start: WorkflowStart, holdMs = 0): Promise<number> {
  return outboxOf(q).insertWorkflowStart({ ...start, trace: traceCarrier() }, holdMs);
}

/** A trigger as the fires it starts need it. */
export interface FiringTrigger {
  id: string;
  account_id: string;
  agent_id: string | null;
}

/**
 * The worker's matching of an event whose listening filters cost more than may be spent where the event
 * is written (engine/events/fan-out.ts), `event:<eventId>`: it completes the event's fan-out (the fires of the
 * triggers it matches; its deliveries were written with the event).
 */
export async function startEventMatching(
  q: Queryable,
  event: Pick<EventRow, 'id' | 'account_id'>,
  /** What the event is about, for the search attributes (the event row does not keep them). */
  about: { agentId?: string | null; triggerId?: string | null } = {},
): Promise<void> {
  const input: EventMatchingInput = { eventId: event.id };
  await insertWorkflowStart(q, {
    workflowType: WORKFLOW_TYPES.event,
    workflowId: workflowIds.event(event.id),
    args: [input],
    tags: { accountId: event.account_id, agentId: about.agentId, triggerId: about.triggerId },
  });
}

/** A delivery written with its workflow start held back (startDelivery's holdMs), for its writer to attempt first. */
export interface FirstAttempt {
  deliveryId: string;
  /** The held outbox row of its `delivery:<id>` workflow start. */
  outboxId: number;
}

/**
 * One generation of a delivery's attempts, `delivery:<id>` (generation 0) or `delivery:<id>:retry-<n>`:
 * an attempt after each delay of `schedule.delaysMs`, each limited to `schedule.timeoutMs`. With
 * `holdMs`, the start is held back that long while the writer makes the first attempt itself
 * (engine/deliveries/first-attempts.ts): it is dropped when that attempt settles the delivery, or released to start at
 * the second attempt. Returns the outbox row's id.
 */
export async function startDelivery(
  q: Queryable,
  delivery: { id: string; accountId: string; agentId?: string | null },
  generation: number,
  schedule: Pick<DeliveryInput, 'delaysMs' | 'timeoutMs'>,
  holdMs = 0,
): Promise<number> {
  const input: DeliveryInput = { deliveryId: delivery.id, generation, delaysMs: schedule.delaysMs, timeoutMs: schedule.timeoutMs };
  return insertWorkflowStart(
    q,
    {
      workflowType: WORKFLOW_TYPES.delivery,
      workflowId: workflowIds.delivery(delivery.id, generation),
      args: [input],
      tags: { accountId: delivery.accountId, agentId: delivery.agentId },
    },
    holdMs,
  );
}

/**
 * The fire of a trigger matching an event, `fire:<triggerId>:event-<eventId>`, one level deeper in the
 * chain and in the same chain (its root event, whose CHAIN_FIRE_BUDGET the caller has taken it from).
 * It carries the event's id, not its data: recordFire reads the data (it grows along a chain, and
 * workflow arguments must stay small).
 */
export async function startEventFire(
  q: Queryable,
  event: Pick<EventRow, 'id' | 'account_id' | 'chain_depth' | 'root_event_id'>,
  trigger: Pick<FiringTrigger, 'id' | 'agent_id'>,
): Promise<void> {
  const input: FireInput = {
    triggerId: trigger.id,
    source: 'event',
    eventId: event.id,
    chainDepth: event.chain_depth + 1,
    rootEventId: event.root_event_id,
  };
  await insertFireStart(q, { accountId: event.account_id, agentId: trigger.agent_id }, input, fireKeys.event(event.id));
}

async function insertFireStart(q: Queryable, tags: Omit<WorkflowTags, 'triggerId'>, input: FireInput, fireKey: string): Promise<void> {
  await insertWorkflowStart(q, {
    workflowType: WORKFLOW_TYPES.fire,
    workflowId: workflowIds.fire(input.triggerId, fireKey),
    args: [input],
    tags: { ...tags, triggerId: input.triggerId },
  });
}

/**
 * What a trigger's Temporal Schedule starts on each tick: `fire:<triggerId>:schedule-<time>` (Temporal
 * appends the scheduled time to the id). Not queued: engine/fires/schedules.ts puts it in the schedule it syncs.
 */
export function scheduledFireAction(trigger: FiringTrigger): ScheduleOptionsAction {
  const input: FireInput = { triggerId: trigger.id, source: 'schedule' };
  // The SDK sends a schedule action's priority (schedule-helpers encodes it) but its type omits the field.
  const action: ScheduleOptionsAction & { priority: Priority } = {
    type: 'startWorkflow',
    workflowType: WORKFLOW_TYPES.fire,
    workflowId: workflowIds.scheduledFire(trigger.id),
    taskQueue: TASK_QUEUE,
    args: [input],
    typedSearchAttributes: searchAttributePairs({ accountId: trigger.account_id, agentId: trigger.agent_id, triggerId: trigger.id }),
    priority: fairnessOf({ accountId: trigger.account_id }),
  };
  return action;
}

/**
 * Where a new run stands in its account's line (engine/runs/run-line.ts): RUN_CONCURRENCY_PER_ACCOUNT and how long
 * a running run holds its slot; and the run's time limit (RUN_TIMEOUT_MS), which its workflow is given.
 */
export interface RunLineLimits {
  limit: number;
  placeMs: number;
  holdMs: number;
  timeoutMs: number;
}

/**
 * An agent run, `run:<runId>`: waits for a slot of its account, makes the run's steps within its time
 * limit and records its result (workflows/run.ts). When the account's line is already full (`line`), the
 * run is parked instead: it waits in Postgres, with no workflow, until a slot frees and engine/runs/run-line.ts
 * calls `startRunWorkflow` for it. Answers whether the workflow start was queued.
 */
export async function startRun(q: Queryable, run: Pick<RunRow, 'id' | 'account_id' | 'agent_id' | 'trigger_id'>, line: RunLineLimits): Promise<boolean> {
  const runs = createRunsRepository(q);
  if (await runs.accountRunLineFull(run.account_id, run.id, line.limit, line.placeMs, line.holdMs)) {
    await runs.parkRun(run.id);
    return false;
  }
  await startRunWorkflow(q, run, line.timeoutMs);
  return true;
}

/**
 * A run's workflow, `run:<runId>`, started whatever its account's line holds (startRun has looked: the line
 * had room, or a slot freed for the parked run), with
 * the run's time limit (`timeoutMs`, RUN_TIMEOUT_MS) in its input: the workflow hands it to the activity
 * that begins the run and makes its first step (workflows/run.ts). A parked run's (`backlog`:
 * engine/runs/run-line.ts) is started at BACKLOG_PRIORITY (engine/temporal/names.ts).
 */
export async function startRunWorkflow(q: Queryable, run: Pick<RunRow, 'id' | 'account_id' | 'agent_id' | 'trigger_id'>, timeoutMs: number, backlog = false): Promise<void> {
  const input: RunInput = { runId: run.id, timeoutMs };
  await insertWorkflowStart(q, {
    ...(backlog ? { backlog: true } : {}),
    workflowType: WORKFLOW_TYPES.run,
    workflowId: workflowIds.run(run.id),
    args: [input],
    tags: { accountId: run.account_id, agentId: run.agent_id, triggerId: run.trigger_id },
  });
}

/**
 * A recovery of a webhook's failed deliveries, `recovery:<recoveryId>` (workflows/recovery.ts): gives each a
 * new generation, batch by batch, each delivery then with its own `delivery:<id>:retry-<n>` workflow.
 */
export async function startRecovery(q: Queryable, recovery: { id: string; accountId: string }): Promise<void> {
  const input: RecoveryInput = { recoveryId: recovery.id };
  await insertWorkflowStart(q, {
    workflowType: WORKFLOW_TYPES.recovery,
    workflowId: workflowIds.recovery(recovery.id),
    args: [input],
    tags: { accountId: recovery.accountId },
  });
}

/**
 * A replay of an agent's failed runs, `replay:<replayId>` (workflows/replay.ts): reruns them batch by batch,
 * each rerun started by `startRun` (its place in its account's line) in its batch's transaction.
 */
export async function startReplay(q: Queryable, replay: { id: string; accountId: string; agentId: string }): Promise<void> {
  const input: ReplayInput = { replayId: replay.id };
  await insertWorkflowStart(q, {
    workflowType: WORKFLOW_TYPES.replay,
    workflowId: workflowIds.replay(replay.id),
    args: [input],
    tags: { accountId: replay.accountId, agentId: replay.agentId },
  });
}

/**
 * Converges the Schedule `trigger:<triggerId>` to the trigger's row (created, updated, paused or
 * deleted). Writes to `triggers` queue this through the database trigger (see above); the reconciler
 * asks for it when Temporal's schedules differ from Postgres.
 */
export async function startScheduleSync(q: Queryable, triggerId: string): Promise<void> {
  await outboxOf(q).insertScheduleSync(triggerId);
}

/**
 * Tells a waiting run that its approval was decided (`approvalDecided` to `run:<runId>`, workflows/approval-wait.ts):
 * written with the decision, so a decision accepted while Temporal is down reaches the run when it returns.
 * The run reads the decision from Postgres; the signal only wakes it.
 */
export async function signalApprovalDecided(q: Queryable, runId: string): Promise<void> {
  await outboxOf(q).insertWorkflowSignal({ workflowId: workflowIds.run(runId), signal: APPROVAL_DECIDED_SIGNAL });
}
