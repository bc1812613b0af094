import type { ActivityDeps } from './deps';

/** The activities of recoverDeliveriesWorkflow (workflows/recovery.ts); a batch is engine/deliveries/recoveries.ts. */
export function createRecoveryActivities(deps: ActivityDeps) {
  const { recoverDeliveryBatch, failRecovery } = deps.recoveries;
  return { recoverDeliveryBatch, failRecovery };
}
