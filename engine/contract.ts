/**
 * The engine's contract: what is stored and handed between the engine, its workflows and the database —
 * workflow inputs and outcomes, fire keys, the tags every workflow carries. Plain data and pure
 * functions, no imports: workflows (deterministic) and db/repositories read it alike.
 */

/** Workflow types, as exported by workflows/index.ts: part of Temporal's running state (a workflow started under a type replays under it). */
export const WORKFLOW_TYPES = {
  fire: 'fireTriggerWorkflow',
  event: 'matchEventWorkflow',
  delivery: 'deliverWebhookWorkflow',
  run: 'runAgentWorkflow',
  retention: 'retentionWorkflow',
  recovery: 'recoverDeliveriesWorkflow',
  replay: 'replayRunsWorkflow',
} as const;

/** Chained fires (from an event) stop at this depth, so a cycle of triggers can't run forever. */
export const MAX_CHAIN_DEPTH = 10;

/** What an operator filters on in the Temporal UI; set on every workflow and schedule we start (engine/temporal/names.ts). */
export interface WorkflowTags {
  accountId: string;
  agentId?: string | null;
  triggerId?: string | null;
}

/** `2026-11-21T10:00:02Z`: a scheduled time as Temporal appends it to a schedule's workflow id. */
export const temporalTime = (at: Date) => at.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Fire keys: a trigger fires once per key (the fire's row), and the key is the tail of its fire
 * workflow's id, `fire:<triggerId>:<fireKey>`. A schedule's action id is `fire:<triggerId>:schedule`,
 * to which Temporal appends `-<scheduled time>`.
 */
export const fireKeys = {
  schedulePrefix: 'schedule',
  schedule: (at: Date) => `schedule-${temporalTime(at)}`,
  event: (eventId: string) => `event-${eventId}`,
  manual: (fireId: string) => `manual-${fireId}`,
  hook: (fireId: string) => `hook-${fireId}`,
} as const;

/** `schedule-2026-11-21T10:00:02Z` → that time; null for any other fire key. */
export function scheduledTimeOf(fireKey: string): Date | null {
  const m = /^schedule-(.+)$/.exec(fireKey);
  if (!m) return null;
  const t = new Date(m[1]!);
  return Number.isNaN(t.getTime()) ? null : t;
}

export const FIRE_ID_PREFIX = 'fire:';

/** The id of a fire workflow: `fire:<triggerId>:<fireKey>`. */
export const fireWorkflowId = (triggerId: string, fireKey: string) => `${FIRE_ID_PREFIX}${triggerId}:${fireKey}`;

/** The fire key of a `fire:<triggerId>:<fireKey>` workflow id. */
export function fireKeyOf(workflowId: string, triggerId: string): string {
  const prefix = fireWorkflowId(triggerId, '');
  if (!workflowId.startsWith(prefix)) throw new Error(`workflow id ${workflowId} is not a fire of trigger ${triggerId}`);
  return workflowId.slice(prefix.length);
}

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
  /** Event fires: the root event of the causing event's chain, whose CHAIN_FIRE_BUDGET this fire spent. */
  rootEventId?: string;
}

export interface FireOutcome {
  fireId: string;
  /**
   * 'duplicate': this fire key was already recorded; 'skipped': trigger disabled, or its agent a template
   * or paused; 'throttled': over the account's FIRES_PER_MINUTE; 'gone': trigger deleted.
   */
  status: 'fired' | 'duplicate' | 'skipped' | 'throttled' | 'gone';
  runId: string | null;
}

/** What an event's fan-out made (`matchEventWorkflow`), kept on the event so a repeated fan-out makes nothing again. */
export interface FanOutResult {
  deliveries: number;
  fires: number;
  /** Matching triggers not fired: the chain's CHAIN_FIRE_BUDGET was spent. */
  overBudget: number;
  /** Listening triggers whose filters were not evaluated: the event's matching budget was spent. */
  unevaluated: number;
}

/** Input of `deliverWebhookWorkflow`, id `delivery:<deliveryId>` (or `…:retry-<generation>`). */
export interface DeliveryInput {
  deliveryId: string;
  generation: number;
  /** Delay before each attempt, in ms (WEBHOOK_RETRY_SCHEDULE at hand-off; one 0 for a manual retry). */
  delaysMs: number[];
  /** WEBHOOK_TIMEOUT_MS at hand-off: each attempt's own time limit. */
  timeoutMs: number;
  /** The index in delaysMs to start at: 1 when the first attempt was made where the delivery was written (engine/deliveries/first-attempts.ts). */
  startAt?: number;
  /** The delay before the attempt at startAt instead of delaysMs[startAt]: the first attempt's answer (its Retry-After). */
  firstDelayMs?: number;
}

/** Input of `matchEventWorkflow`, id `event:<eventId>`. */
export interface EventMatchingInput {
  eventId: string;
}

/**
 * What a first attempt made where the delivery was written changes in its held workflow start's
 * DeliveryInput when it releases it (engine/deliveries/first-attempts.ts, db/repositories/outbox.ts `releaseHeld`).
 */
export type DeliveryStartPatch = Pick<DeliveryInput, 'startAt' | 'firstDelayMs'>;

/** 'retry': the attempt failed and more remain; 'stopped': cancelled, superseded or deleted. */
export type AttemptOutcome = 'succeeded' | 'retry' | 'failed' | 'stopped';

/** What one call of attemptDelivery answers: an outcome, or 'wait' (no slot free: nothing sent, no attempt used). */
export type AttemptStep = AttemptOutcome | 'wait';

/**
 * 'retry' with the delay before the next attempt: the schedule's, or later when the endpoint answered
 * 429/503 with a `Retry-After` that asks for more (at most MAX_RETRY_AFTER_MS). Answered instead of a
 * plain 'retry' only to a caller that asks for it (AttemptInput.answerDelay): an older workflow that
 * does not ask (a rolling deploy) still gets 'retry'.
 */
export interface RetryIn {
  step: 'retry';
  delayMs: number;
}

export type AttemptAnswer = AttemptStep | RetryIn;

/** Input of `recoverDeliveriesWorkflow`, id `recovery:<recoveryId>`; its progress lives in the recovery's row. */
export interface RecoveryInput {
  recoveryId: string;
}

/** One batch of a recovery: `done` when nothing is left (or the recovery ended: gone, webhook disabled). */
export interface RecoveryBatchOutcome {
  done: boolean;
  status: 'running' | 'completed' | 'failed' | 'gone';
}

/** Input of `replayRunsWorkflow`, id `replay:<replayId>`; its progress lives in the replay's row. */
export interface ReplayInput {
  replayId: string;
}

/** One batch of a replay: `done` when no run is left to rerun (or the replay is gone with its agent). */
export interface ReplayBatchOutcome {
  done: boolean;
}

/** Input of `runAgentWorkflow`, id `run:<runId>`. */
export interface RunInput {
  runId: string;
  /**
   * RUN_TIMEOUT_MS when the run's workflow start was written (engine/outbox/starts.ts): the run's time
   * limit, known to the workflow before its first step (workflows/run.ts `beginWithFirstStep`). Absent
   * in the inputs of runs started before it was written (continued as new since): the workflow takes the most RUN_TIMEOUT_MS can be.
   */
  timeoutMs?: number;
}

/** What a run's step does: 'tool' calls one of the agent's tools, 'model' calls the language model. */
export type StepType = 'tool' | 'model' | 'approval';
/** The steps an activity makes by a call (an approval step is a wait: workflows/run.ts). */
export type CallStepType = Exclude<StepType, 'approval'>;

/** A step of a run as its workflow knows it: its row (run_steps) holds the rest. */
export interface StepRef {
  runId: string;
  index: number;
  type: StepType;
}

/**
 * The agent a run runs, as its workflow's `invoke_agent` span names it (workflows/agent-span.ts): told when
 * the run begins running (absent in a retry's answer, and in answers recorded before it was added), with the
 * model of a model run.
 */
export interface RunAgent {
  id: string;
  name: string;
  model?: string;
}

/**
 * beginRun's answer (and beginRunStep's `begun`): 'running' with the steps to make — the steps planned
 * when the run began — and the time left (RUN_TIMEOUT_MS from the moment the run started running); 'queued' when the account has no free slot or older runs are first in line
 * (wait for the `runSlotFreed` signal, or recheckMs at the latest); else the run is not to be executed:
 * it is finished already, or gone (its agent was deleted).
 */
export type BeginRunOutcome =
  | { status: 'running'; timeoutMs: number; steps: StepRef[]; agent?: RunAgent }
  | { status: 'queued'; recheckMs: number }
  | { status: 'succeeded' | 'failed' | 'gone' };

/**
 * beginRunStep's answer: `begun` as beginRun's; when the run is running with a step and time left, `first`
 * is the outcome of its first planned step, made in the same activity, and `begun.steps` are the planned
 * steps after it (the steps the first added are its `next`). Without `first`, `begun.steps` are all the
 * steps still to make (none: an agent with no tools; or the run's time is up, `begun.timeoutMs` 0).
 */
export interface BegunRun {
  begun: BeginRunOutcome;
  first?: StepOutcome;
}

/**
 * A step activity's answer, small on purpose (the step's output stays in Postgres, out of the workflow
 * history): 'done' with the steps it adds to the run, if any (a model step adds the tool calls it asks
 * for); 'stopped' when the run is no longer running (finished meanwhile, or deleted).
 */
export type StepOutcome =
  /** `ended`: the step was the run's last and ended the run (workflows/run.ts `makeStepsBy`). */
  | { status: 'done'; ok: boolean; next?: StepRef[]; ended?: 'succeeded' | 'failed' }
  | { status: 'stopped' };

export interface RunOutcome {
  status: 'queued' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'gone';
}

/**
 * requestApproval's answer (engine/runs/approvals.ts): the run waits for a decision on its approval step
 * until `expiresAtMs` (epoch ms; `decided`: it was decided already, look at once); 'stopped' when the run
 * is no longer running.
 */
export type ApprovalWait = { status: 'waiting'; approvalId: string; expiresAtMs: number; decided: boolean } | { status: 'stopped' };

/**
 * resumeApproval's answer: the step's outcome once decided (the tool step an approve adds, the model step
 * after the turn); 'pending' (not decided, not yet expired: wait until `expiresAtMs` again); 'queued' (decided,
 * but the account's RUN_CONCURRENCY_PER_ACCOUNT slots are taken: wait for `runSlotFreed` or `recheckMs`).
 */
export type ApprovalResume = StepOutcome | { status: 'pending'; expiresAtMs: number } | { status: 'queued'; recheckMs: number };

/** Signalled to `run:<id>` by the outbox (engine/outbox/starts.ts `signalApprovalDecided`) once a decision on its approval is recorded. */
export const APPROVAL_DECIDED_SIGNAL = 'approvalDecided';

/** Signalled to `run:<id>` when a run of its account finishes: a slot may be free, ask again. */
export const RUN_SLOT_FREED_SIGNAL = 'runSlotFreed';

/** The error of a run that was cancelled (POST /api/runs/:id/cancel): its workflow's failRun, or the API for a run without a workflow. */
export const RUN_CANCELLED_ERROR = 'the run was cancelled';

/** The input of each workflow that is queued through the outbox (engine/outbox/starts.ts), by its key in WORKFLOW_TYPES. */
interface QueuedWorkflowInputs {
  fire: FireInput;
  event: EventMatchingInput;
  delivery: DeliveryInput;
  run: RunInput;
  recovery: RecoveryInput;
  replay: ReplayInput;
}

/**
 * A workflow to start, recorded in the transaction of its cause (db/repositories/outbox.ts) and handed to
 * Temporal after the commit: its type, id, the one input its type takes, its tags, and `backlog` for work
 * from an account's backlog (a parked run promoted), started at a lower priority.
 */
export type WorkflowStart = {
  [K in keyof QueuedWorkflowInputs]: {
    workflowType: (typeof WORKFLOW_TYPES)[K];
    workflowId: string;
    args: [QueuedWorkflowInputs[K]];
    tags: WorkflowTags;
    backlog?: boolean;
    /** The trace the work belongs to (W3C `traceparent`/`tracestate`), when tracing is on: its workflow joins it. */
    trace?: Record<string, string>;
  };
}[keyof QueuedWorkflowInputs];
