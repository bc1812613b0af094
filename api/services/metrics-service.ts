import { collectDefaultMetrics, Counter, Gauge, Registry, type LabelValues, type MetricObjectWithValues, type MetricValueWithName } from 'prom-client';
import type { HistogramCounts, MetricsRepository } from '../../db/repositories/metrics';
import { DESCRIBE_DEADLINE_MS, POLLED_QUEUES, type TaskQueuePollers } from '../../engine';

/** Seconds. An API request; a delivery attempt (up to WEBHOOK_TIMEOUT_MS); a schedule fire's lag. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const ATTEMPT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60];
/** Seconds, a run from its creation (queued) to its end: tool runs take seconds, model runs minutes (RUN_TIMEOUT_MS 5 min). */
const RUN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const FIRE_LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

const FIRE_SOURCES = ['schedule', 'manual', 'webhook', 'event'];
const FIRE_STATUSES = ['fired', 'skipped', 'throttled'];
const DELIVERY_OUTCOMES = ['succeeded', 'failed', 'cancelled'];
const ATTEMPT_OUTCOMES = ['succeeded', 'failed'];
const RUN_OUTCOMES = ['succeeded', 'failed'];
const RUN_STATES = ['queued', 'running'];
const CORRECTIONS = ['missing', 'orphaned', 'paused', 'unpaused'];

/**
 * A histogram whose observations arrive already counted (from SQL): it adds bucket counts, sums and counts,
 * and shows them as prom-client's own histograms do (`_bucket{le}`, `_sum`, `_count`).
 */
class CountedHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { labels: LabelValues<L>; counts: HistogramCounts }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  add(labels: LabelValues<L>, counts: HistogramCounts): void {
    const key = JSON.stringify(labels);
    const current = this.series.get(key) ?? { labels, counts: { count: 0, sum: 0, buckets: this.bounds.map(() => 0) } };
    current.counts = {
      count: current.counts.count + counts.count,
      sum: current.counts.sum + counts.sum,
      buckets: current.counts.buckets.map((n, i) => n + (counts.buckets[i] ?? 0)),
    };
    this.series.set(key, current);
  }

  get(): Omit<MetricObjectWithValues<MetricValueWithName<string>>, 'collect'> {
    const values: MetricValueWithName<string>[] = [];
    for (const { labels, counts } of this.series.values()) {
      this.bounds.forEach((le, i) => values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: counts.buckets[i]! }));
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: counts.count });
      values.push({ metricName: `${this.name}_sum`, labels, value: counts.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: counts.count });
    }
    return { name: this.name, help: this.help, type: 'histogram' as never, aggregator: 'sum', values };
  }
}

/**
 * Requests by method, route and status: their count (`<name>_requests_total`) and their latency histogram,
 * kept in plain arrays (one map lookup and a few additions per request, no label hashing) and shown in
 * prom-client's format at scrape time.
 */
class RequestMetrics {
  private readonly series = new Map<string, { labels: Record<string, string>; count: number; sum: number; buckets: number[] }>();

  constructor(
    private readonly names: { requests: string; duration: string },
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    const register = (name: string, help: string, type: 'counter' | 'histogram', values: () => unknown[]) =>
      registry.registerMetric({ name, help, type, aggregator: 'sum', get: () => ({ name, help, type, aggregator: 'sum', values: values() }) } as unknown as Parameters<
        Registry['registerMetric']
      >[0]);
    register(names.requests, 'HTTP requests answered by this API process, by method, route pattern (unmatched: no route) and status', 'counter', () =>
      [...this.series.values()].map(({ labels, count }) => ({ labels, value: count })),
    );
    register(names.duration, 'Time from receiving a request to sending its response, by method, route pattern and status', 'histogram', () =>
      this.histogramValues(),
    );
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: this.bounds.map(() => 0) };
      this.series.set(key, series);
    }
    series.count++;
    series.sum += seconds;
    for (let i = this.bounds.length - 1; i >= 0 && seconds <= this.bounds[i]!; i--) series.buckets[i]!++;
  }

  private histogramValues() {
    const values: MetricValueWithName<string>[] = [];
    for (const { labels, count, sum, buckets } of this.series.values()) {
      this.bounds.forEach((le, i) => values.push({ metricName: `${this.names.duration}_bucket`, labels: { ...labels, le }, value: buckets[i]! }));
      values.push({ metricName: `${this.names.duration}_bucket`, labels: { ...labels, le: '+Inf' }, value: count });
      values.push({ metricName: `${this.names.duration}_sum`, labels, value: sum });
      values.push({ metricName: `${this.names.duration}_count`, labels, value: count });
    }
    return values;
  }
}

/** A scrape waits this long for Temporal's list of pollers (its own deadline is DESCRIBE_DEADLINE_MS). */
const POLLERS_WAIT_MS = DESCRIBE_DEADLINE_MS + 500;

const NO_OBSERVATIONS = (bounds: readonly number[]): HistogramCounts => ({ count: 0, sum: 0, buckets: bounds.map(() => 0) });

/**
 * GET /metrics (docs/operations.md § Metrics). Two kinds of figures:
 * - this API process's own: requests by route pattern and status with their latency, and Node's process
 *   metrics (prom-client's defaults);
 * - the engine's, the whole system's (every API instance shows the same): fires, deliveries, attempts, runs,
 *   the outbox, the reconciler's corrections and missed fires. The engine's work happens in the worker
 *   processes (and, for manual fires and hooks, here), and every piece of it writes a row; so each scrape
 *   adds what the rows written since the previous scrape say (one short index range per table), and reads
 *   the outbox and the queues as they stand, at most once per METRICS_SNAPSHOT_MS (5 s) however many scrape.
 *   Counters begin at the process's first scrape.
 */
export function createMetricsService(deps: {
  metrics: MetricsRepository;
  /** The worker processes polling each task queue, as Temporal reports them (engine/temporal/pollers.ts). */
  pollers: () => Promise<TaskQueuePollers[]>;
  log: (msg: string, err: unknown) => void;
  snapshotMs: number;
}) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new RequestMetrics(
    { requests: 'agent_platform_http_requests_total', duration: 'agent_platform_http_request_duration_seconds' },
    REQUEST_BUCKETS,
    registry,
  );

  const fires = new Counter({
    name: 'agent_platform_fires_total',
    help: 'Fires recorded, by source (schedule, manual, webhook, event) and status (fired, skipped, throttled)',
    labelNames: ['source', 'status'] as const,
    registers,
  });
  const fireLag = new CountedHistogram<never>(
    'agent_platform_fire_lag_seconds',
    'Schedule fires: time from the scheduled time to the fire being recorded',
    FIRE_LAG_BUCKETS,
    registry,
  );
  const deliveries = new Counter({
    name: 'agent_platform_deliveries_total',
    help: 'Deliveries finished, by outcome (succeeded, failed after the last attempt, cancelled)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const attempts = new Counter({
    name: 'agent_platform_delivery_attempts_total',
    help: 'Delivery attempts made, by outcome (succeeded: a 2xx; failed: anything else)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const attemptDuration = new CountedHistogram<'outcome'>(
    'agent_platform_delivery_attempt_duration_seconds',
    'Delivery attempts: time from sending the request to its answer (or error), by outcome',
    ATTEMPT_BUCKETS,
    registry,
  );
  const runsFinished = new Counter({
    name: 'agent_platform_runs_finished_total',
    help: 'Agent runs finished, by status (succeeded, failed)',
    labelNames: ['status'] as const,
    registers,
  });
  const runDuration = new CountedHistogram<'status'>(
    'agent_platform_run_duration_seconds',
    'Agent runs finished: time from the run being created (queued) to its end, by status (succeeded, failed)',
    RUN_BUCKETS,
    registry,
  );
  const corrections = new Counter({
    name: 'agent_platform_reconciler_corrections_total',
    help: "Schedules the reconciler's sweep found different from Postgres and corrected, by reason (missing, orphaned, paused, unpaused)",
    labelNames: ['reason'] as const,
    registers,
  });
  const missedFires = new Counter({
    name: 'agent_platform_trigger_missed_fires_total',
    help: 'Schedule times that passed without a fire and without a reason (each also emits trigger.missed)',
    registers,
  });
  const runs = new Gauge({ name: 'agent_platform_runs', help: 'Agent runs now queued or running', labelNames: ['status'] as const, registers });
  const pendingDeliveries = new Gauge({ name: 'agent_platform_deliveries_pending', help: 'Deliveries now pending (waiting for an attempt)', registers });
  const outboxRows = new Gauge({ name: 'agent_platform_outbox_rows', help: 'Work written to the outbox and not yet handed to Temporal', registers });
  const outboxAge = new Gauge({
    name: 'agent_platform_outbox_oldest_age_seconds',
    help: 'Age of the oldest outbox row (0 when empty): how far the hand-off to Temporal is behind',
    registers,
  });
  const pollers = new Gauge({
    name: 'agent_platform_task_queue_pollers',
    help:
      'Worker processes Temporal saw polling a task queue in the last 2 minutes, by task queue and type (workflow, activity); ' +
      '0 when Temporal could not be asked',
    labelNames: ['task_queue', 'type'] as const,
    registers,
  });
  const engineUp = new Gauge({
    name: 'agent_platform_engine_metrics_up',
    help: '1 when this scrape read the engine figures from Postgres, 0 when it could not (they then keep their last values)',
    registers,
  });

  // Every series exists from the first scrape, at 0.
  for (const source of FIRE_SOURCES) for (const status of FIRE_STATUSES) fires.inc({ source, status }, 0);
  for (const outcome of DELIVERY_OUTCOMES) deliveries.inc({ outcome }, 0);
  for (const outcome of ATTEMPT_OUTCOMES) {
    attempts.inc({ outcome }, 0);
    attemptDuration.add({ outcome }, NO_OBSERVATIONS(ATTEMPT_BUCKETS));
  }
  fireLag.add({}, NO_OBSERVATIONS(FIRE_LAG_BUCKETS));
  for (const status of RUN_OUTCOMES) {
    runsFinished.inc({ status }, 0);
    runDuration.add({ status }, NO_OBSERVATIONS(RUN_BUCKETS));
  }
  for (const reason of CORRECTIONS) corrections.inc({ reason }, 0);
  missedFires.inc(0);

  /** The end of the last window counted (Postgres's text of it); null until the first scrape. */
  let countedUntil: string | null = null;

  async function readEngine(): Promise<void> {
    const until = await deps.metrics.settledBound(countedUntil);
    if (countedUntil !== null && until !== countedUntil) {
      const seen = await deps.metrics.activity(countedUntil, until, { fireLag: FIRE_LAG_BUCKETS, attempt: ATTEMPT_BUCKETS, run: RUN_BUCKETS });
      for (const row of seen.fires) fires.inc({ source: row.source, status: row.status }, row.n);
      fireLag.add({}, seen.fireLag);
      for (const row of seen.attempts) {
        attempts.inc({ outcome: row.outcome }, row.duration.count);
        attemptDuration.add({ outcome: row.outcome }, row.duration);
      }
      for (const row of seen.deliveries) deliveries.inc({ outcome: row.status }, row.n);
      for (const row of seen.runs) runsFinished.inc({ status: row.status }, row.n);
      for (const row of seen.runDurations) runDuration.add({ status: row.status }, row.duration);
      for (const row of seen.corrections) corrections.inc({ reason: row.reason }, row.n);
      missedFires.inc(seen.missedFires);
    }
    countedUntil = until;
    const state = await deps.metrics.state();
    for (const status of RUN_STATES) runs.set({ status }, state.runs.find((r) => r.status === status)?.n ?? 0);
    pendingDeliveries.set(state.pendingDeliveries);
    outboxRows.set(state.outboxRows);
    outboxAge.set(state.outboxOldestAgeSeconds);
  }

  /**
   * The last question to Temporal, settled or not: a scrape waits for it at most POLLERS_WAIT_MS (a connection
   * that never opens must not hold /metrics), the process's close until it settles (the SDK's retries of
   * an unavailable server run on timers until the call's deadline, and must not outlive the connection).
   */
  let asking: Promise<unknown> = Promise.resolve();
  async function readPollers(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const asked = deps.pollers();
      asking = asked.catch(() => {});
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Temporal did not answer within ${POLLERS_WAIT_MS} ms`)), POLLERS_WAIT_MS);
      });
      for (const queue of await Promise.race([asked, late])) pollers.set({ task_queue: queue.taskQueue, type: queue.type }, queue.pollers);
    } catch (err) {
      for (const queue of POLLED_QUEUES) pollers.set({ task_queue: queue.taskQueue, type: queue.type }, 0);
      deps.log('metrics: could not ask Temporal which workers poll', err);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The engine's figures are a snapshot: read again only when the last read began at least `snapshotMs`
   * ago, by one scrape, which the scrapes arriving meanwhile wait for (never two reads at once: they would
   * count the same window twice). So Postgres sees at most one read per `snapshotMs` per process, however
   * many scrape, and a scrape never shows figures older than that. A failed read counts as a read too
   * (engine_metrics_up 0 until the next): a scrape loop cannot hammer a database that is down.
   */
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | null = null;
  function engineSnapshot(): Promise<void> {
    if (reading) return reading;
    if (Date.now() - readAt < deps.snapshotMs) return Promise.resolve();
    readAt = Date.now();
    reading = (async () => {
      const polled = readPollers();
      try {
        await readEngine();
        engineUp.set(1);
      } catch (err) {
        engineUp.set(0);
        deps.log('metrics: could not read the engine figures from Postgres', err);
      } finally {
        await polled;
        reading = null;
      }
    })();
    return reading;
  }

  return {
    contentType: registry.contentType,

    /** Resolves once no question to Temporal is outstanding (called when the app closes, before its Temporal connection does). */
    idle: () => asking,

    /** Called once per response (api/plugins/metrics.ts). `route` is the route's pattern, never the URL. */
    observeRequest(method: string, route: string, status: number, seconds: number): void {
      requests.observe(method, route, status, seconds);
    },

    /** The exposition text: this process's own figures as they are now, the engine's from their snapshot. */
    async render(): Promise<string> {
      await engineSnapshot();
      return registry.metrics();
    },
  };
}
export type MetricsService = ReturnType<typeof createMetricsService>;
