/**
 * The engine's front door: the one engine module that api/, worker/ and activities/ import (lint:
 * eslint.config.mjs, `engineFrontDoor`). `createEngine` composes the engine of a process once, with its
 * settings (engine/compose.ts); the rest is plain data, types and pure helpers the processes need to
 * name what the engine does (workflow ids, task queues, fire keys), with nothing composed behind them.
 * Where things are: docs/architecture.md § The front door.
 */
export { composeEngine as createEngine, type Engine, type EngineDeps } from './compose';
export type { Unit, EmittedEvent, Transaction } from './unit';

// What the engine, its workflows and the database exchange (plain data).
export { RUN_CANCELLED_ERROR, WORKFLOW_TYPES, fireKeys, type AttemptAnswer, type EventMatchingInput, type FireOutcome } from './contract';
export type { EventAbout } from './events/fan-out';
export { DELIVERY_TASK_QUEUE, SCHEDULE_ID_PREFIX, TASK_QUEUE, workflowIds } from './temporal/names';

// The processes' own Temporal plumbing.
export { createTemporalClient, refuseCallsHoldingConnectionOf, TemporalCallInsideConnectionError, type TemporalClient } from './temporal/client';
export { DESCRIBE_DEADLINE_MS, POLLED_QUEUES, taskQueuePollers, type TaskQueuePollers } from './temporal/pollers';
export { whileHeartbeating } from './temporal/heartbeat';

// Answers and helpers about fires, deliveries and runs.
export { isScheduled } from './fires/schedules';
export { fireWorkflowEnds, scheduledFireWorkflowId } from './fires/fire-workflows';
export { FireRateExceeded, type FireToRecord } from './fires/record-fire';
export type { FiringTrigger } from './outbox/starts';
export type { AttemptInput } from './deliveries/attempts';
export { offerTools } from './runs/executor/tool-functions';
export { createRunActivities } from './runs';
export { emitRunEnd } from './runs/end-event';
