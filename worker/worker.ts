import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Db } from '../db/pool';
import { TASK_QUEUE } from '../lib/temporal-names';

/** Builds a worker on the `agent-platform` task queue; the caller owns the connection and the pool. */
export async function createWorker(deps: {
  connection: NativeConnection;
  namespace: string;
  db: Db;
  workflowBundle?: WorkerOptions['workflowBundle'];
}): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: TASK_QUEUE,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities({ db: deps.db }),
  });
}

/** Connects to Temporal, retrying while it is unreachable (the worker may start before Temporal). */
export async function connectWithRetry(address: string, log: (msg: string) => void, signal: AbortSignal): Promise<NativeConnection> {
  let delay = 500;
  for (;;) {
    try {
      return await NativeConnection.connect({ address });
    } catch (err) {
      if (signal.aborted) throw err;
      log(`Temporal at ${address} is not reachable (${(err as Error).message}); retrying in ${delay} ms`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 10_000);
    }
  }
}
