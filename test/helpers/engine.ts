import { NativeConnection, Runtime, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Activities } from '../../activities';
import type { ActivityDeps } from '../../activities/deps';
import { buildApp } from '../../api/app';
import type { Db } from '../../db/pool';
import type { Config } from '../../lib/config';
import { createSecretBox } from '../../lib/secrets';
import { createTemporalClient } from '../../lib/temporal-client';
import { DELIVERY_TASK_QUEUE, TASK_QUEUE } from '../../lib/temporal-names';
import { WorkerLogger } from '../../worker/sdk-logger';
import { bundleWorkflows, createEngine, type Engine } from '../../worker/worker';
import type { TestApp } from './app';
import { testConfig } from './config';
import { createTestDatabase } from './database';
import { testNamespace } from './namespace';

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
  engine: Engine;
  /** Stops the worker (drained, as on SIGTERM); `startWorker()` starts a new one on the same database. */
  stopWorker: () => Promise<void>;
  startWorker: () => Promise<void>;
  /** What the running worker's activities are built from, for calling an activity directly (as a Temporal retry would). */
  activityDeps: () => ActivityDeps;
  close: () => Promise<void>;
}

/**
 * The whole engine in this process, as `npm start` runs it in two: the API (app.inject) and the worker
 * (Temporal worker, outbox hand-off, reconciler) on a fresh database and this test file's own
 * namespace of the test run's real Temporal dev server.
 */
export async function startEngine(testFile: string, overrides: Record<string, string> = {}): Promise<EngineHarness> {
  quietRuntime();
  const database = await createTestDatabase();
  const config = testConfig(database.url, {
    TEMPORAL_NAMESPACE: testNamespace(testFile),
    RECONCILE_INTERVAL_MS: '500',
    ...overrides,
  });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const temporal = createTemporalClient(config);
  const app = await buildApp({ config, db: database.db, temporal, logger: false });
  await app.ready();

  const quiet = () => {};
  let engine!: Engine;
  let running: Promise<void> = Promise.resolve();
  const startWorker = async () => {
    engine = await createEngine({ connection, config, db: database.db, workflowBundle: await workflowBundle(), log: quiet });
    running = engine.run();
  };
  const stopWorker = async () => {
    engine.shutdown();
    await running;
  };
  await startWorker();

  return {
    app,
    db: database.db,
    config,
    get engine() {
      return engine;
    },
    startWorker,
    stopWorker,
    activityDeps: () => ({ db: database.db, config, secrets: createSecretBox(config.secretsKey), handOff: engine.handOff, client: engine.client }),
    close: async () => {
      await stopWorker().catch(() => {});
      await app.close();
      await temporal.close();
      await connection.close();
      await database.drop();
    },
  };
}
