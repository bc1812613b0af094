import type { Queryable } from '../pool';

/**
 * Why the reconciler's sweep corrected a trigger's schedule: Temporal had none for a cron/schedule trigger
 * (`missing`), had one for a trigger that no longer exists or is no longer scheduled (`orphaned`), had it
 * paused while the trigger is enabled (`paused`), or running while the trigger is disabled (`unpaused`).
 */
export type CorrectionReason = 'missing' | 'orphaned' | 'paused' | 'unpaused';

/** The reconciler's corrections (worker/reconciler.ts); GET /metrics counts them. */
export function createScheduleCorrectionsRepository(db: Queryable) {
  return {
    async record(triggerId: string, reason: CorrectionReason, q: Queryable = db): Promise<void> {
      await q.query(`INSERT INTO schedule_corrections (trigger_id, reason) VALUES ($1, $2)`, [triggerId, reason]);
    },

    /** Whether a schedule sync of the trigger is already queued (then a difference is on its way to being mended). */
    async syncQueued(triggerId: string, q: Queryable = db): Promise<boolean> {
      const { rows } = await q.query(`SELECT 1 FROM outbox WHERE kind = 'schedule' AND payload ->> 'triggerId' = $1 LIMIT 1`, [triggerId]);
      return rows.length > 0;
    },
  };
}
