import { createDeliveriesRepository } from '../../db/repositories/deliveries';
import { createRecoveriesRepository } from '../../db/repositories/recoveries';
import { createWebhooksRepository } from '../../db/repositories/webhooks';
import type { Transaction } from '../unit';
import type { RecoveryBatchOutcome, RecoveryInput } from '../contract';
import type { Db } from '../../db/pool';
import type { Config } from '../../lib/config';

/**
 * A recovery of a webhook's failed deliveries, batch by batch (recoverDeliveriesWorkflow,
 * workflows/recovery.ts; its activities: activities/recoveries.ts). Each batch is a unit of work (engine/unit.ts).
 */
export function createRecoveries(deps: { db: Db; config: Pick<Config, 'webhooks'>; transaction: Transaction }) {
  const { db, config, transaction } = deps;
  const recoveries = createRecoveriesRepository(db);
  const deliveries = createDeliveriesRepository(db);
  const webhooks = createWebhooksRepository(db);

  return {
    /**
     * One batch of a recovery, in one transaction: the next RECOVERY_BATCH_SIZE failed deliveries of its
     * window (after its cursor) each get a new generation and its `delivery:<id>:retry-<n>` workflow start,
     * as a manual retry does (one attempt now, same `webhook-id`); the recovery records them and moves its
     * cursor. A retried batch resumes at the cursor, so no delivery is given two generations. The webhook's
     * row is locked first, as a retry and a disable do: a webhook disabled or turned incoming meanwhile
     * ends the recovery `failed`; a deleted one took the recovery with it (`gone`).
     */
    async recoverDeliveryBatch(input: RecoveryInput): Promise<RecoveryBatchOutcome> {
      return transaction(async (tx, unit): Promise<RecoveryBatchOutcome> => {
        const seen = await recoveries.findForWork(input.recoveryId, tx);
        if (!seen) return { done: true, status: 'gone' };
        const webhook = await webhooks.findByIdForUpdate(seen.account_id, seen.webhook_id, tx);
        const recovery = await recoveries.findForWork(input.recoveryId, tx, true);
        if (!webhook || !recovery) return { done: true, status: 'gone' };
        if (recovery.status !== 'running') return { done: true, status: recovery.status };
        if (webhook.direction !== 'outgoing' || !webhook.enabled) {
          await recoveries.finish(recovery.id, 'failed', tx);
          return { done: true, status: 'failed' };
        }
        const limit = config.webhooks.recoveryBatchSize;
        const batch = await recoveries.nextBatch(recovery.id, limit, config.webhooks.recoverInterval.ms, config.webhooks.maxAttempts, tx);
        const items: { deliveryId: string; generation: number }[] = [];
        for (const d of batch) {
          const { generation } = await deliveries.startGeneration(d.id, tx);
          await unit.startDelivery({ id: d.id, accountId: recovery.account_id }, generation);
          items.push({ deliveryId: d.id, generation });
        }
        if (batch.length > 0) await recoveries.recordBatch(recovery.id, items, batch[batch.length - 1]!, tx);
        if (batch.length < limit) {
          await recoveries.finish(recovery.id, 'completed', tx);
          return { done: true, status: 'completed' };
        }
        return { done: false, status: 'running' };
      });
    },

    /** The recovery workflow's last word when a batch failed for good: the recovery is `failed`. */
    async failRecovery(input: RecoveryInput): Promise<void> {
      await recoveries.finish(input.recoveryId, 'failed');
    },
  };
}
export type Recoveries = ReturnType<typeof createRecoveries>;
