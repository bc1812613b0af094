import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { fireKeys } from '../contract';
import { workflowIds } from '../temporal/names';

/** A workflow still running ends, as far as anyone knows, after every time asked about. */
const STILL_RUNNING = new Date(8.64e15);
/** How long a page of expected fires waits for Temporal at most (it answers without it, from Postgres alone). */
const DEADLINE_MS = 3_000;

/** The workflow id of a schedule fire: `fire:<triggerId>:schedule-<time>`. */
export const scheduledFireWorkflowId = (triggerId: string, at: Date) => workflowIds.fire(triggerId, fireKeys.schedule(at));

/**
 * When the fire workflows of a trigger's schedule fires ended, by scheduled time (ms): their close time, or
 * far ahead while still running. A workflow Temporal no longer keeps (past the namespace's retention), or
 * any answer not given within 3 s, is left out.
 */
export async function fireWorkflowEnds(client: Client, triggerId: string, scheduledAts: Date[]): Promise<Map<number, Date>> {
  const ends = new Map<number, Date>();
  if (scheduledAts.length === 0) return ends;
  try {
    await client.withDeadline(Date.now() + DEADLINE_MS, async () => {
      for (const at of scheduledAts) {
        try {
          const run = await client.workflow.getHandle(scheduledFireWorkflowId(triggerId, at)).describe();
          ends.set(at.getTime(), run.status.name === 'RUNNING' ? STILL_RUNNING : (run.closeTime ?? STILL_RUNNING));
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
      }
    });
  } catch {
    // Temporal unreachable or slow: what was learned so far, and Postgres for the rest.
  }
  return ends;
}
