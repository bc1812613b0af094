// Deterministic orchestration only: no I/O, clock or randomness here (lint enforces it).
export { healthProbeWorkflow } from './health-probe';
export { fireTriggerWorkflow } from './fire';
export { matchEventWorkflow } from './event-matching';
export { deliverWebhookWorkflow } from './delivery';
export { runAgentWorkflow } from './run';
export { retentionWorkflow } from './retention';
export { recoverDeliveriesWorkflow } from './recovery';
export { replayRunsWorkflow } from './replay';
