import type { LastAttemptRow, WebhookStatsRepository, WindowStatsRow } from '../../db/repositories/webhook-stats';
import { SERIES_WINDOWS, type SeriesWindow } from '../schemas/webhook-stats';
import type { WebhooksRepository } from '../../db/repositories/webhooks';
import { ConflictError, NotFoundError } from '../errors';
import type { Caller } from './auth-service';

const window = (row: WindowStatsRow) => ({
  deliveries: { succeeded: row.deliveries_succeeded, failed: row.deliveries_failed, pending: row.deliveries_pending, cancelled: row.deliveries_cancelled },
  attempts: { succeeded: row.attempts_succeeded, failed: row.attempts_failed },
  attemptLatencyMs: { p50: row.latency_p50_ms, p99: row.latency_p99_ms },
});

const attempt = (row: LastAttemptRow | null) =>
  row && { at: row.at.toISOString(), deliveryId: row.delivery_id, statusCode: row.status_code, error: row.error, durationMs: row.duration_ms };

/** An outgoing webhook's health at a glance (docs/api.md § Webhooks): is this endpoint failing, and since when. */
export function createWebhookStatsService(deps: { webhooks: WebhooksRepository; stats: WebhookStatsRepository; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());
  async function requireOutgoing(caller: Caller, webhookId: string) {
    const webhook = await deps.webhooks.findById(caller.accountId, webhookId);
    if (!webhook) throw new NotFoundError('Webhook');
    if (webhook.direction !== 'outgoing') throw new ConflictError('Webhook is incoming; only outgoing webhooks make deliveries');
    return webhook;
  }

  return {
    async stats(caller: Caller, webhookId: string) {
      const webhook = await requireOutgoing(caller, webhookId);
      const { day, week, pending_now } = await deps.stats.windows(webhookId);
      const [lastSuccess, lastFailure] = [await deps.stats.lastAttempt(webhookId, true), await deps.stats.lastAttempt(webhookId, false)];
      return {
        webhookId,
        enabled: webhook.enabled,
        generatedAt: now().toISOString(),
        pendingDeliveries: pending_now,
        last24h: window(day),
        last7d: window(week),
        lastSuccess: attempt(lastSuccess),
        lastFailure: attempt(lastFailure),
      };
    },

    /**
     * The endpoint's attempts over a window, bucket by bucket (a chart of success rate and latency): every
     * bucket, empty ones included, aligned to whole buckets since the epoch, the last one holding now.
     */
    async series(caller: Caller, webhookId: string, window: SeriesWindow) {
      await requireOutgoing(caller, webhookId);
      const { buckets, bucketSeconds } = SERIES_WINDOWS[window];
      const at = now();
      const bucketMs = bucketSeconds * 1000;
      const since = new Date(Math.floor(at.getTime() / bucketMs) * bucketMs - (buckets - 1) * bucketMs);
      const rows = new Map((await deps.stats.attemptBuckets(webhookId, since, bucketSeconds)).map((row) => [row.at.getTime(), row]));
      return {
        webhookId,
        window,
        bucketSeconds,
        generatedAt: at.toISOString(),
        buckets: Array.from({ length: buckets }, (_, i) => {
          const start = since.getTime() + i * bucketMs;
          const row = rows.get(start);
          const succeeded = row?.succeeded ?? 0;
          const failed = row?.failed ?? 0;
          return {
            at: new Date(start).toISOString(),
            attempts: { succeeded, failed },
            successRate: succeeded + failed > 0 ? succeeded / (succeeded + failed) : null,
            attemptLatencyMs: { p50: row?.latency_p50_ms ?? null, p99: row?.latency_p99_ms ?? null },
          };
        }),
      };
    },
  };
}
export type WebhookStatsService = ReturnType<typeof createWebhookStatsService>;
