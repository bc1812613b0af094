import { NativeConnection, Runtime, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { createActivities, type Activities } from '../../activities';
import { composeEngine } from '../../engine/compose';
import { testSecretBox } from './config';
import type { ActivityDeps } from '../../activities/deps';
import type { Db } from '../../db/pool';
import type { Config } from '../../lib/config';
import { DELIVERY_TASK_QUEUE, TASK_QUEUE } from '../../engine/temporal/names';
import { WorkerLogger } from '../../worker/sdk-logger';
import { bundleWorkflows, createEngineWorker, type EngineWorker } from '../../worker/worker';
import { startTestApp, type TestApp } from './app';
import { onCleanup, type Cleanup } from './cleanup';
import { testNamespace } from './namespace';

/**
 * The real activities over an engine composed for a test's database and Temporal client; deliveries go to
 * their workflows at once (no first attempt in this process).
 */
export function engineActivities(db: Db, config: Config, client: Client): Activities {
  return createActivities(composeEngine({ db, config, secrets: testSecretBox, client, firstAttempts: false }));
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
let runtimeInstalled = false;

/** The workflow code, bundled once per test file (process) and reused by every worker it starts. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflows();
  return bundle;
}

/** Installs the SDK runtime once per process, logging from `level` up (tests that fail activities on purpose: ERROR). */
export function quietRuntime(level: 'WARN' | 'ERROR' = 'WARN'): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new WorkerLogger(level) });
}

/**
 * The engine's two workers, as worker/worker.ts runs them (TASK_QUEUE: workflows and activities;
 * DELIVERY_TASK_QUEUE: delivery attempts), on `connection` with these activities, while `fn` runs.
 */
export async function whileWorkersRun<T>(connection: NativeConnection, activities: Activities, fn: () => Promise<T>): Promise<T> {
  const main = await Worker.create({ connection, taskQueue: TASK_QUEUE, workflowBundle: await workflowBundle(), activities });
  const deliveries = await Worker.create({ connection, taskQueue: DELIVERY_TASK_QUEUE, activities: { attemptDelivery: activities.attemptDelivery } });
  const running = deliveries.run();
  try {
    return await main.runUntil(fn);
  } finally {
    deliveries.shutdown();
    await running;
  }
}

export interface EngineHarness {
  app: TestApp;
  db: Db;
  config: Config;
  engine: EngineWorker;
  /** Stops the worker (drained, as on SIGTERM); `startWorker()` starts a new one on the same database. */
  stopWorker: () => Promise<void>;
  startWorker: () => Promise<void>;
  /** What the running worker's activities are built from, for calling an activity directly (as a Temporal retry would). */
  activityDeps: () => ActivityDeps;
}

/**
 * The whole engine in this process, as `npm start` runs it in two: the API (`startTestApp`) and the
 * worker (Temporal worker, outbox hand-off, reconciler) on a fresh database and this test file's own
 * namespace of the test run's real Temporal dev server; all stopped when `t` ends.
 */
export async function startEngine(t: Cleanup, testFile: string, overrides: Record<string, string> = {}): Promise<EngineHarness> {
  quietRuntime();
  const { app, db, config } = await startTestApp(t, { TEMPORAL_NAMESPACE: testNamespace(testFile), RECONCILE_INTERVAL_MS: '500', ...overrides });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  onCleanup(t, () => connection.close());

  const quiet = () => {};
  let engine: EngineWorker | undefined;
  let running: Promise<void> = Promise.resolve();
  const startWorker = async () => {
    engine = await createEngineWorker({ connection, config, db, workflowBundle: await workflowBundle(), log: quiet });
    running = engine.run();
  };
  const stopWorker = async () => {
    engine?.shutdown();
    await running;
  };
  onCleanup(t, () => stopWorker().catch(() => {}));
  await startWorker();

  return {
    app,
    db,
    config,
    get engine() {
      return engine!;
    },
    startWorker,
    stopWorker,
    activityDeps: () => engine!.composed,
  };
}
