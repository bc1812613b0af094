import { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker, type WorkerOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Db } from '../db/pool';
import type { Config } from '../lib/config';
import { createSecretBox } from '../lib/secrets';
import { createEngine, DELIVERY_TASK_QUEUE, refuseCallsHoldingConnectionOf, TASK_QUEUE } from '../engine';
import { startReconciler } from './reconciler';
import { ensureRetentionSchedule } from './retention-schedule';
import { describeConnectFailure, probeTls } from '../lib/temporal-failures';
import type { TemporalConnectionSettings } from '../lib/temporal-settings';
import { tracingClientInterceptors, tracingWorkerOptions, tracingWorkflowModules } from '../lib/tracing/temporal';

const MAX_RETRY_DELAY_MS = 10_000;

/**
 * The workflow code bundled by webpack, as Worker.create would do from workflowsPath, but without its
 * report of every module (a screenful at each start): its logger only passes warnings and errors.
 */
export function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    workflowInterceptorModules: tracingWorkflowModules(), // tracing's, when it is on (lib/tracing/temporal.ts)
    logger: new DefaultLogger('WARN'),
  });
}

/**
 * How long a workflow's next task waits on its worker's own (sticky) queue before any worker may take it.
 * A worker killed with SIGKILL never says it is gone, so the next task of each workflow it had cached
 * (a run whose retried step has just returned) waits this long for it: the SDK's 10 s default was most of
 * the time from a worker's return to the last run finished (test/e2e/resilience.test.ts). A live worker
 * takes its sticky tasks in milliseconds; one that is slower than this is saturated, and the task is
 * better replayed by whichever worker polls first.
 */
const STICKY_QUEUE_TIMEOUT = '3 seconds';

export interface EngineWorkerDeps {
  connection: NativeConnection;
  config: Config;
  db: Db;
  /** From bundleWorkflows(), made once per process: a worker rebuilt after an error reuses it. */
  workflowBundle: WorkflowBundleWithSourceMap;
  log?: (msg: string, err?: unknown) => void;
  /** Worker options over ours, for the engine bench's tuning runs (bench/engine.ts BENCH_WORKER, BENCH_DELIVERY_WORKER). */
  tuning?: { main?: Partial<WorkerOptions>; deliveries?: Partial<WorkerOptions> };
}

/**
 * The worker side of the engine: the Temporal worker on `agent-platform` (workflows and activities),
 * the delivery worker on `agent-platform-deliveries` (delivery attempts only, DELIVERY_WORKER_SLOTS at
 * once: slow endpoints hold those slots, never the main worker's), the process's one client, its
 * outbox hand-off and the reconciler; creating it also ensures the Schedule `system:retention`
 * (worker/retention-schedule.ts). The caller owns the connection and the pool; `run()` polls until
 * `shutdown()`, or until either worker stops (then both do).
 */
export async function createEngineWorker(deps: EngineWorkerDeps) {
  const { config, db } = deps;
  const log = deps.log ?? ((msg: string, err?: unknown) => console.log(`[worker] ${msg}${err ? `: ${(err as Error).message ?? err}` : ''}`));
  // Its calls refused while a pooled database connection is held, as the API's are (engine/temporal/client.ts).
  const client = new Client({ connection: refuseCallsHoldingConnectionOf(deps.connection), namespace: config.temporal.namespace, interceptors: tracingClientInterceptors() });
  const secrets = createSecretBox(config.secretsKey);
  // The engine of this process, built once; it also makes the first attempt of the deliveries the fires
  // it records write (engine/deliveries/first-attempts.ts).
  const composed = createEngine({ db, config, secrets, client, log });
  const { handOff } = composed;
  await ensureRetentionSchedule(client);
  const activities = createActivities(composed);
  const worker = await Worker.create({
    connection: deps.connection,
    namespace: config.temporal.namespace,
    taskQueue: TASK_QUEUE,
    workflowBundle: deps.workflowBundle,
    activities,
    stickyQueueScheduleToStartTimeout: STICKY_QUEUE_TIMEOUT,
    // On shutdown, activities in flight get this long to finish before they are cancelled (SHUTDOWN_GRACE_MS).
    shutdownGraceTime: config.shutdown.graceMs,
    ...tracingWorkerOptions(true),
    // A tuner (the benches' tuning runs) replaces the slot counts.
    ...(deps.tuning?.main?.tuner ? {} : { maxConcurrentWorkflowTaskExecutions: config.engine.workflowTaskSlots }),
    ...deps.tuning?.main,
  });
  const deliveryWorker = await Worker.create({
    connection: deps.connection,
    namespace: config.temporal.namespace,
    taskQueue: DELIVERY_TASK_QUEUE,
    activities: { attemptDelivery: activities.attemptDelivery },
    maxConcurrentActivityTaskExecutions: config.webhooks.workerSlots,
    shutdownGraceTime: config.shutdown.graceMs,
    ...tracingWorkerOptions(false),
    ...deps.tuning?.deliveries,
  });
  const workers = [worker, deliveryWorker];
  const shutdown = () => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  };
  let reconciler: ReturnType<typeof startReconciler> | undefined;

  return {
    worker,
    client,
    handOff,
    /** The process's engine (engine/compose.ts), which the activities adapt. */
    composed,
    /** Reconciles and polls until shutdown; resolves once the worker has drained. */
    async run(): Promise<void> {
      reconciler = startReconciler({
        db, client, handOff, log,
        transaction: composed.transaction,
        runLine: composed.runLine,
        intervalMs: config.engine.reconcileIntervalMs,
        sweepEveryMs: config.engine.scheduleSweepMs,
        missedFireGraceMs: config.missedFires.graceMs,
      });
      try {
        const ended = await Promise.allSettled(workers.map((w) => w.run().finally(shutdown)));
        const failed = ended.find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
      } finally {
        await reconciler.stop();
      }
    },
    shutdown,
    /** Why the engine is not polling (a worker not RUNNING, with its state), or null when both are. */
    notPolling(): string | null {
      const queues = [TASK_QUEUE, DELIVERY_TASK_QUEUE];
      const idle = workers.map((w, i) => ({ queue: queues[i], state: w.getState() })).filter((w) => w.state !== 'RUNNING');
      return idle.length === 0 ? null : idle.map((w) => `the worker of task queue ${w.queue} is ${w.state}`).join('; ');
    },
    sweep: () => (reconciler ? reconciler.sweep() : Promise.resolve(0)),
  };
}
export type EngineWorker = Awaited<ReturnType<typeof createEngineWorker>>;

/**
 * Connects to Temporal (address, TLS, API key from the standard configuration), retrying while it is
 * unreachable (the worker may start before Temporal). One line per problem: a problem already told is
 * retried without a line.
 */
export async function connectWithRetry(settings: TemporalConnectionSettings, log: (msg: string) => void, signal: AbortSignal): Promise<NativeConnection> {
  let delay = 500;
  const told = new Set<string>();
  for (;;) {
    try {
      return await NativeConnection.connect({ ...settings });
    } catch (err) {
      if (signal.aborted) throw err;
      let problem = describeConnectFailure(settings.address, err);
      // A TLS connection cut short shows as a broken pipe or a reset when the client wrote before it read
      // the server's alert: a handshake of our own tells which.
      if (/ is not reachable /.test(problem)) problem = (await probeTls(settings)) ?? problem;
      if (!told.has(problem)) log(`${problem}; retrying (every ${MAX_RETRY_DELAY_MS / 1000} s at most) until it answers`);
      told.add(problem);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, MAX_RETRY_DELAY_MS);
    }
  }
}
