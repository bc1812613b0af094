import type { Queryable } from '../pool';

/** Cumulative counts of a histogram's observations: `buckets[i]` counts the values ≤ the i-th bound. */
export interface HistogramCounts {
  count: number;
  sum: number;
  buckets: number[];
}

/** What happened in the engine between two instants (`after` < t ≤ `until`), from the rows it wrote. */
export interface EngineActivity {
  fires: { source: string; status: string; n: number }[];
  /** Schedule fires: seconds from the scheduled time to the fire's row. */
  fireLag: HistogramCounts;
  attempts: { outcome: 'succeeded' | 'failed'; duration: HistogramCounts }[];
  deliveries: { status: string; n: number }[];
  runs: { status: string; n: number }[];
  /** Runs finished: seconds from the run's creation (queued) to its end, by status. */
  runDurations: { status: string; duration: HistogramCounts }[];
  corrections: { reason: string; n: number }[];
  missedFires: number;
}

/** How things stand now. */
export interface EngineState {
  outboxRows: number;
  /** Seconds since the oldest outbox row was written; 0 when the outbox is empty. */
  outboxOldestAgeSeconds: number;
  pendingDeliveries: number;
  runs: { status: string; n: number }[];
}

/**
 * `count(*) FILTER (WHERE <value> <= le)` for each bound, the count and the sum. The bounds are the
 * caller's constants (never input), written into the SQL as numbers.
 */
function histogramColumns(value: string, bounds: readonly number[]): string {
  const buckets = bounds.map((le) => `count(*) FILTER (WHERE ${value} <= ${Number(le)})`).join(', ');
  return `count(*)::int AS count, coalesce(sum(${value}), 0)::float8 AS sum, ARRAY[${buckets}]::int[] AS buckets`;
}

/**
 * The engine's figures for GET /metrics (docs/operations.md § Metrics), read from the rows the engine writes.
 * Every query reads one index range of rows written in (after, until], or a small table.
 */
export function createMetricsRepository(db: Queryable) {
  return {
    /**
     * The latest instant whose rows are all visible: a row's timestamp is its transaction's start
     * (`now()`), so a transaction still open may yet commit rows stamped at its start. The bound stays
     * just before the oldest open transaction of this database (but at most 60 s back: a longer one's
     * rows are counted when it is no longer the oldest, or not at all if it commits after that). As
     * Postgres prints it: a JS Date would drop the microseconds, and the next window starts exactly here.
     * Never before `notBefore` (the end of the window counted last).
     */
    async settledBound(notBefore: string | null, q: Queryable = db): Promise<string> {
      const { rows } = await q.query<{ bound: string }>(
        `SELECT greatest($1::timestamptz, least(now(), greatest(now() - interval '60 seconds', coalesce((
           SELECT min(xact_start) FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND xact_start IS NOT NULL
         ), now())) - interval '1 microsecond'))::text AS bound`,
        [notBefore],
      );
      return rows[0]!.bound;
    },

    async activity(after: string, until: string, bounds: { fireLag: readonly number[]; attempt: readonly number[]; run: readonly number[] }, q: Queryable = db): Promise<EngineActivity> {
      const window = [after, until];
      // One after the other: a scrape holds one connection of the pool, never several.
      const fires = await q.query<{ source: string; status: string; n: number }>(
        `SELECT source, status, count(*)::int AS n FROM fires WHERE created_at > $1 AND created_at <= $2 GROUP BY source, status`,
        window,
      );
      const lag = await q.query<HistogramCounts>(
        `SELECT ${histogramColumns('extract(epoch FROM created_at - scheduled_at)', bounds.fireLag)}
         FROM fires WHERE created_at > $1 AND created_at <= $2 AND scheduled_at IS NOT NULL`,
        window,
      );
      const attempts = await q.query<HistogramCounts & { outcome: 'succeeded' | 'failed' }>(
        `SELECT CASE WHEN status_code BETWEEN 200 AND 299 THEN 'succeeded' ELSE 'failed' END AS outcome,
           ${histogramColumns('duration_ms / 1000.0', bounds.attempt)}
         FROM delivery_attempts WHERE created_at > $1 AND created_at <= $2 GROUP BY 1`,
        window,
      );
      const deliveries = await q.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM deliveries WHERE finished_at > $1 AND finished_at <= $2 GROUP BY status`,
        window,
      );
      const runs = await q.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM runs WHERE finished_at > $1 AND finished_at <= $2 GROUP BY status`,
        window,
      );
      const runDurations = await q.query<HistogramCounts & { status: string }>(
        `SELECT status, ${histogramColumns('extract(epoch FROM finished_at - created_at)', bounds.run)}
         FROM runs WHERE finished_at > $1 AND finished_at <= $2 GROUP BY status`,
        window,
      );
      const corrections = await q.query<{ reason: string; n: number }>(
        `SELECT reason, count(*)::int AS n FROM schedule_corrections WHERE created_at > $1 AND created_at <= $2 GROUP BY reason`,
        window,
      );
      const missed = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM trigger_missed_fires WHERE created_at > $1 AND created_at <= $2`, window);
      return {
        fires: fires.rows,
        fireLag: lag.rows[0]!,
        attempts: attempts.rows.map(({ outcome, ...duration }) => ({ outcome, duration })),
        deliveries: deliveries.rows,
        runs: runs.rows,
        runDurations: runDurations.rows.map(({ status, ...duration }) => ({ status, duration })),
        corrections: corrections.rows,
        missedFires: missed.rows[0]!.n,
      };
    },

    async state(q: Queryable = db): Promise<EngineState> {
      const outbox = await q.query<{ rows: number; age: number }>(
        `SELECT (SELECT count(*)::int FROM outbox) AS rows,
           coalesce(extract(epoch FROM now() - (SELECT created_at FROM outbox ORDER BY id LIMIT 1)), 0)::float8 AS age`,
      );
      const pending = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'`);
      const runs = await q.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM runs WHERE status IN ('queued', 'running') GROUP BY status`,
      );
      return {
        outboxRows: outbox.rows[0]!.rows,
        outboxOldestAgeSeconds: Math.max(0, outbox.rows[0]!.age),
        pendingDeliveries: pending.rows[0]!.n,
        runs: runs.rows,
      };
    },
  };
}
export type MetricsRepository = ReturnType<typeof createMetricsRepository>;
