import type { Queryable } from '../pool';

/** Counts and latencies of one window (the last 24 h or 7 days). */
export interface WindowStatsRow {
  deliveries_succeeded: number;
  deliveries_failed: number;
  deliveries_pending: number;
  deliveries_cancelled: number;
  attempts_succeeded: number;
  attempts_failed: number;
  latency_p50_ms: number | null;
  latency_p99_ms: number | null;
}

/** One bucket of a webhook's attempts over time (GET /api/webhooks/:id/stats/series). */
export interface AttemptBucketRow {
  at: Date;
  succeeded: number;
  failed: number;
  latency_p50_ms: number | null;
  latency_p99_ms: number | null;
}

export interface LastAttemptRow {
  at: Date;
  delivery_id: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

const SUCCEEDED = 'status_code BETWEEN 200 AND 299';

/**
 * An outgoing webhook's health (GET /api/webhooks/:id/stats): its deliveries by status and its attempts by
 * outcome with their latency, over the last day and the last week, and its last success and last failure.
 * Deliveries are read by `deliveries_page` (webhook, created_at), attempts by `delivery_attempts_webhook`
 * (webhook, created_at; migration 13): one index range each, whatever the account holds besides.
 */
export function createWebhookStatsRepository(db: Queryable) {
  const windowOf = (days: number, key: string) => ({ since: `now() - interval '${days} days'`, key });

  return {
    async windows(webhookId: string, q: Queryable = db): Promise<{ day: WindowStatsRow; week: WindowStatsRow; pending_now: number }> {
      const day = windowOf(1, 'day');
      const week = windowOf(7, 'week');
      const deliveries = await q.query<Record<string, number>>(
        `SELECT
           ${[day, week].flatMap(({ since, key }) => ['succeeded', 'failed', 'pending', 'cancelled'].map((s) => `count(*) FILTER (WHERE status = '${s}' AND created_at >= ${since})::int AS ${key}_${s}`)).join(',\n           ')},
           (SELECT count(*)::int FROM deliveries WHERE webhook_id = $1 AND status = 'pending') AS pending_now
         FROM deliveries WHERE webhook_id = $1 AND created_at >= ${week.since}`,
        [webhookId],
      );
      const attempts = await q.query<Record<string, number | null>>(
        `SELECT
           ${[day, week]
             .map(
               ({ since, key }) =>
                 `count(*) FILTER (WHERE ${SUCCEEDED} AND created_at >= ${since})::int AS ${key}_succeeded,
           count(*) FILTER (WHERE NOT coalesce(${SUCCEEDED}, false) AND created_at >= ${since})::int AS ${key}_failed,
           percentile_disc(0.5) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE created_at >= ${since}) AS ${key}_p50,
           percentile_disc(0.99) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE created_at >= ${since}) AS ${key}_p99`,
             )
             .join(',\n           ')}
         FROM delivery_attempts WHERE webhook_id = $1 AND created_at >= ${week.since}`,
        [webhookId],
      );
      const d = deliveries.rows[0]!;
      const a = attempts.rows[0]!;
      const of = (key: string): WindowStatsRow => ({
        deliveries_succeeded: d[`${key}_succeeded`]!,
        deliveries_failed: d[`${key}_failed`]!,
        deliveries_pending: d[`${key}_pending`]!,
        deliveries_cancelled: d[`${key}_cancelled`]!,
        attempts_succeeded: a[`${key}_succeeded`] ?? 0,
        attempts_failed: a[`${key}_failed`] ?? 0,
        latency_p50_ms: a[`${key}_p50`] ?? null,
        latency_p99_ms: a[`${key}_p99`] ?? null,
      });
      return { day: of('day'), week: of('week'), pending_now: d.pending_now! };
    },

    /**
     * The attempts made from `since` on, in buckets of `bucketSeconds` counted from `since` (date_bin): each
     * bucket's successes, failures and latency percentiles. Buckets without an attempt are absent.
     */
    async attemptBuckets(webhookId: string, since: Date, bucketSeconds: number, q: Queryable = db): Promise<AttemptBucketRow[]> {
      const { rows } = await q.query<AttemptBucketRow>(
        `SELECT date_bin(make_interval(secs => $3), created_at, $2) AS at,
           count(*) FILTER (WHERE ${SUCCEEDED})::int AS succeeded,
           count(*) FILTER (WHERE NOT coalesce(${SUCCEEDED}, false))::int AS failed,
           percentile_disc(0.5) WITHIN GROUP (ORDER BY duration_ms) AS latency_p50_ms,
           percentile_disc(0.99) WITHIN GROUP (ORDER BY duration_ms) AS latency_p99_ms
         FROM delivery_attempts WHERE webhook_id = $1 AND created_at >= $2
         GROUP BY 1 ORDER BY 1`,
        [webhookId, since, bucketSeconds],
      );
      return rows;
    },

    /** The newest attempt that succeeded (a 2xx), or that failed (anything else), within retention. */
    async lastAttempt(webhookId: string, succeeded: boolean, q: Queryable = db): Promise<LastAttemptRow | null> {
      const { rows } = await q.query<LastAttemptRow>(
        `SELECT created_at AS at, delivery_id, status_code, error, duration_ms FROM delivery_attempts
         WHERE webhook_id = $1 AND ${succeeded ? SUCCEEDED : `NOT coalesce(${SUCCEEDED}, false)`}
         ORDER BY created_at DESC LIMIT 1`,
        [webhookId],
      );
      return rows[0] ?? null;
    },
  };
}
export type WebhookStatsRepository = ReturnType<typeof createWebhookStatsRepository>;
