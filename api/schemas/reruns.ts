import { z } from 'zod';
import { maxJsonBytes, timestamp } from './common';

/** Runs one replay reruns at most: the oldest of its window (docs/api.md § Rerun and replay). */
export const MAX_REPLAY_RUNS = 1_000;

export const rerunBody = z
  .strictObject({
    fromStep: z
      .int()
      .min(0)
      .optional()
      .describe(
        'The step to go on from (default 0): the steps before it are copied from the run (recorded, not made again), and the rerun ' +
          "makes the rest with the agent as it is now. At most the run's number of steps",
      ),
    input: maxJsonBytes(z.unknown(), 65_536)
      .optional()
      .describe("Replaces the run's input (at most 64 KiB of JSON); only with fromStep 0 or none. Default: the run's input"),
  })
  // No body at all reaches validation as null.
  .nullish()
  .meta({ id: 'RerunRun', description: 'Optional; no body reruns the whole run with its input.' });
export type RerunBody = z.infer<typeof rerunBody>;

const instant = z.iso.datetime({ offset: true });

export const replayBody = z
  .strictObject({
    status: z.literal('failed').describe('The runs to rerun: those that failed'),
    since: instant.describe('ISO 8601 instant: runs created at or after it are rerun'),
    until: instant.optional().describe('ISO 8601 instant, exclusive; default: now. After since'),
  })
  .meta({ id: 'ReplayRuns' });
export type ReplayBody = z.infer<typeof replayBody>;

export const replayParams = z.object({ id: z.uuid(), replayId: z.uuid() });

export const replaySchema = z
  .object({
    id: z.uuid(),
    count: z.int().min(0).describe(`The runs it reruns: the agent's failed runs of the window when it was asked for, the oldest ${MAX_REPLAY_RUNS} at most`),
    started: z.int().min(0).describe('Of those, the ones whose rerun has been started so far (a run deleted meanwhile is counted and skipped)'),
    status: z.enum(['running', 'done', 'failed']).describe('running: reruns are still being started; done: every one has been; failed: starting them failed for good (Postgres unreachable for the whole retry schedule) after `started` of them'),
    createdAt: timestamp,
  })
  .meta({ id: 'RunReplay' });

/** The answer to POST /api/agents/:id/runs/replay. */
export const replayStartedSchema = replaySchema.pick({ id: true, count: true }).meta({ id: 'RunReplayStarted' });
