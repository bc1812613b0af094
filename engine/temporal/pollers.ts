import type { Client } from '@temporalio/client';
import { DELIVERY_TASK_QUEUE, TASK_QUEUE } from './names';

/** How many worker processes poll one task queue for one kind of task. */
export interface TaskQueuePollers {
  taskQueue: string;
  type: 'workflow' | 'activity';
  pollers: number;
}

/** temporal.api.enums.v1.TaskQueueType (the proto package is not a runtime dependency). */
const TASK_QUEUE_TYPES = { workflow: 1, activity: 2 } as const;
/** The queues our workers poll, and for what: workflows and activities on the main queue, delivery attempts on their own. */
export const POLLED_QUEUES = [
  { taskQueue: TASK_QUEUE, type: 'workflow' },
  { taskQueue: TASK_QUEUE, type: 'activity' },
  { taskQueue: DELIVERY_TASK_QUEUE, type: 'activity' },
] as const;

/**
 * Temporal keeps a poller in DescribeTaskQueue for 5 minutes after its last poll; a live one polls again
 * within about a minute (a long poll), so one not seen for 2 minutes is gone (or stuck with every slot full).
 */
export const POLLER_SEEN_WITHIN_MS = 120_000;

function secondsOf(value: unknown): number {
  if (value === null || value === undefined) return 0;
  const long = value as { toNumber?: () => number };
  return typeof long.toNumber === 'function' ? long.toNumber() : Number(value);
}

/** How long Temporal has to answer (its SDK retries an unavailable server until then). */
export const DESCRIBE_DEADLINE_MS = 3_000;

/** The worker processes (distinct identities) Temporal saw polling each of our task queues lately (DescribeTaskQueue). */
export function taskQueuePollers(client: Client, now = Date.now()): Promise<TaskQueuePollers[]> {
  return client.withDeadline(now + DESCRIBE_DEADLINE_MS, () => describeAll(client, now));
}

function describeAll(client: Client, now: number): Promise<TaskQueuePollers[]> {
  return Promise.all(
    POLLED_QUEUES.map(async ({ taskQueue, type }) => {
      const described = await client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: TASK_QUEUE_TYPES[type],
      });
      const recent = (described.pollers ?? []).filter((p) => now - secondsOf(p.lastAccessTime?.seconds) * 1000 <= POLLER_SEEN_WITHIN_MS);
      return { taskQueue, type, pollers: new Set(recent.map((p) => p.identity)).size };
    }),
  );
}
