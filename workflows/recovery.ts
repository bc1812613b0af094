import { ActivityFailure, ApplicationFailure, continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ENGINE_RETRY, reasonOf } from './retry-policies';
import type { RecoveryInput } from '../engine/contract';

const { recoverDeliveryBatch } = proxyActivities<Activities>({
  // A batch is one transaction of RECOVERY_BATCH_SIZE short statements: a silent minute means a dead worker.
  startToCloseTimeout: '1 minute',
  retry: ENGINE_RETRY,
});
/**
 * The recovery's last word, one idempotent UPDATE: asked until it is said (Postgres down for longer than the
 * batch's retries must not leave the recovery `running`).
 */
const { failRecovery } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...ENGINE_RETRY, maximumAttempts: 0 },
});

/** Batches per run: the history stays short (a few events per batch); the progress lives in the recovery's row. */
export const RECOVERY_BATCHES_PER_RUN = 20;

/**
 * A recovery of a webhook's failed deliveries, id `recovery:<recoveryId>` (POST /api/webhooks/:id/recover):
 * `recoverDeliveryBatch` gives the next RECOVERY_BATCH_SIZE of them a new generation each (each delivery then
 * has its own `delivery:<id>:retry-<n>` workflow, as after a manual retry) and moves the recovery's cursor,
 * until none is left. Continues as new every RECOVERY_BATCHES_PER_RUN batches (or when Temporal suggests it).
 * A batch that fails for good marks the recovery `failed` and fails the workflow with the reason.
 */
export async function recoverDeliveriesWorkflow(input: RecoveryInput): Promise<'completed' | 'failed' | 'gone'> {
  for (let batch = 0; ; batch++) {
    if (batch >= RECOVERY_BATCHES_PER_RUN || workflowInfo().continueAsNewSuggested) {
      return continueAsNew<typeof recoverDeliveriesWorkflow>(input);
    }
    let outcome;
    try {
      outcome = await recoverDeliveryBatch(input);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      const reason = reasonOf(err);
      await failRecovery(input);
      throw ApplicationFailure.create({ message: `recovery ${input.recoveryId} failed: ${reason}`, type: 'RecoveryFailed', nonRetryable: true, cause: err });
    }
    if (outcome.status !== 'running') return outcome.status;
  }
}
