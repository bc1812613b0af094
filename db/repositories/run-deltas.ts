import type { Queryable } from '../pool';

/**
 * A model step's text as it arrives, told to the API processes' live run streams: a notification on the
 * run_events channel (the one each API process already listens on, migration 10), its payload a JSON
 * object — the run ids the database notifies are never one. Nothing is written to a table: a delta lives
 * only in the notification queue until every listener has read it.
 */
export interface RunDelta {
  runId: string;
  stepIndex: number;
  /** Where `text` starts in the step's text so far (UTF-16 code units), so a gap or a restart is seen. */
  offset: number;
  text: string;
}

/** PostgreSQL refuses a payload of 8000 bytes or more; a delta's text is cut to at most this many. */
export const MAX_DELTA_TEXT_BYTES = 6000;

export function createRunDeltasRepository(db: Queryable) {
  return {
    async notifyRunDelta(delta: RunDelta, q: Queryable = db): Promise<void> {
      await q.query(`SELECT pg_notify('run_events', $1)`, [JSON.stringify(delta)]);
    },
  };
}

/** A run_events payload read back as a delta; null for anything else (a run's id). */
export function parseRunDelta(payload: string): RunDelta | null {
  if (!payload.startsWith('{')) return null;
  try {
    const d = JSON.parse(payload) as Partial<RunDelta>;
    if (typeof d.runId !== 'string' || typeof d.stepIndex !== 'number' || typeof d.offset !== 'number' || typeof d.text !== 'string') return null;
    return d as RunDelta;
  } catch {
    return null;
  }
}
