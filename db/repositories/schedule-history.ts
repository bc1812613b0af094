import type { Queryable } from '../pool';

/** What a cron/schedule trigger was from `valid_from` on (migration 13, written by the database). */
export interface ScheduleVersionRow {
  trigger_id: string;
  valid_from: Date;
  type: string;
  enabled: boolean;
  cron_expression: string | null;
  timezone: string | null;
  overlap_policy: string | null;
  catchup_window: string | null;
}

/** A schedule fire as expected fires are judged against: when it was scheduled and when it was recorded. */
export interface ScheduleFireRow {
  trigger_id: string;
  id: string;
  scheduled_at: Date;
  recorded_at: Date;
  status: 'fired' | 'skipped' | 'throttled';
  run_id: string | null;
}

const FIRE_COLUMNS = `trigger_id, id, scheduled_at, created_at AS recorded_at, status, run_id`;

/**
 * A trigger's schedule over time and the schedule fires it made (GET …/expected-fires, the reconciler's
 * search for missed fires). Every query takes several triggers at once, so a sweep over all of them is a
 * handful of statements; each reads the indexes of migration 13.
 */
export function createScheduleHistoryRepository(db: Queryable) {
  return {
    /**
     * The versions of each trigger in force at some time before `until`: the last one that began before
     * `since`, and every one that began from then on. Oldest first.
     */
    async versions(triggerIds: string[], since: Date, until: Date, q: Queryable = db): Promise<ScheduleVersionRow[]> {
      const { rows } = await q.query<ScheduleVersionRow>(
        `SELECT h.trigger_id, h.valid_from, h.type, h.enabled, h.cron_expression, h.timezone, h.overlap_policy, h.catchup_window
         FROM unnest($1::uuid[]) AS t(id)
         JOIN LATERAL (
           (SELECT * FROM trigger_schedule_history WHERE trigger_id = t.id AND valid_from < $2 ORDER BY valid_from DESC, id DESC LIMIT 1)
           UNION ALL
           (SELECT * FROM trigger_schedule_history WHERE trigger_id = t.id AND valid_from >= $2 AND valid_from < $3)
         ) h ON true
         ORDER BY h.trigger_id, h.valid_from, h.id`,
        [triggerIds, since, until],
      );
      return rows;
    },

    /** Each trigger's first version (its creation), for times before it. */
    async firstVersions(triggerIds: string[], q: Queryable = db): Promise<ScheduleVersionRow[]> {
      const { rows } = await q.query<ScheduleVersionRow>(
        `SELECT h.trigger_id, h.valid_from, h.type, h.enabled, h.cron_expression, h.timezone, h.overlap_policy, h.catchup_window
         FROM unnest($1::uuid[]) AS t(id)
         JOIN LATERAL (SELECT * FROM trigger_schedule_history WHERE trigger_id = t.id ORDER BY valid_from, id LIMIT 1) h ON true`,
        [triggerIds],
      );
      return rows;
    },

    /**
     * The schedule fires of each trigger scheduled in [from, to], with, around them, the last one scheduled
     * before `from` (it may still have been running at `from`) and the first one scheduled after `to` (when
     * the schedule next fired after a gap).
     */
    async fires(triggerIds: string[], from: Date, to: Date, q: Queryable = db): Promise<ScheduleFireRow[]> {
      const { rows } = await q.query<ScheduleFireRow>(
        `SELECT ${FIRE_COLUMNS} FROM fires
         WHERE trigger_id = ANY($1::uuid[]) AND scheduled_at >= $2 AND scheduled_at <= $3
         UNION ALL
         SELECT f.* FROM unnest($1::uuid[]) AS t(id) JOIN LATERAL (
           SELECT ${FIRE_COLUMNS} FROM fires WHERE trigger_id = t.id AND scheduled_at < $2 ORDER BY scheduled_at DESC LIMIT 1
         ) f ON true
         UNION ALL
         SELECT f.* FROM unnest($1::uuid[]) AS t(id) JOIN LATERAL (
           SELECT ${FIRE_COLUMNS} FROM fires WHERE trigger_id = t.id AND scheduled_at > $3 ORDER BY scheduled_at LIMIT 1
         ) f ON true`,
        [triggerIds, from, to],
      );
      return rows;
    },

    /** Every cron/schedule trigger, with what its events name. */
    async scheduledTriggers(q: Queryable = db): Promise<{ id: string; account_id: string; agent_id: string | null }[]> {
      const { rows } = await q.query<{ id: string; account_id: string; agent_id: string | null }>(
        `SELECT id, account_id, agent_id FROM triggers WHERE type IN ('schedule', 'cron')`,
      );
      return rows;
    },

    /** When the reconciler corrected each trigger's schedule (missing or paused) within [from, to]. */
    async corrections(triggerIds: string[], from: Date, to: Date, q: Queryable = db): Promise<{ trigger_id: string; created_at: Date }[]> {
      const { rows } = await q.query<{ trigger_id: string; created_at: Date }>(
        `SELECT trigger_id, created_at FROM schedule_corrections
         WHERE trigger_id = ANY($1::uuid[]) AND reason IN ('missing', 'paused') AND created_at >= $2 AND created_at <= $3`,
        [triggerIds, from, to],
      );
      return rows;
    },
  };
}
export type ScheduleHistoryRepository = ReturnType<typeof createScheduleHistoryRepository>;

/**
 * Missed fires (the reconciler's search, docs/api.md § Triggers): where the search has got to, and one row per
 * missed time, so each emits trigger.missed once.
 */
export function createMissedFiresRepository(db: Queryable) {
  return {
    /**
     * Takes the search's place (a row lock, held until the caller's transaction ends: one worker searches at
     * a time) and answers where it got to and the database's clock; null the first time, when the search
     * starts from now.
     */
    async claim(q: Queryable = db): Promise<{ checkedUntil: Date | null; now: Date }> {
      const inserted = await q.query<{ now: Date }>(
        `INSERT INTO missed_fire_checks (checked_until) VALUES (now()) ON CONFLICT DO NOTHING RETURNING now() AS now`,
      );
      if (inserted.rows.length > 0) return { checkedUntil: null, now: inserted.rows[0]!.now };
      const { rows } = await q.query<{ checked_until: Date; now: Date }>(`SELECT checked_until, now() AS now FROM missed_fire_checks FOR UPDATE`);
      return { checkedUntil: rows[0]!.checked_until, now: rows[0]!.now };
    },

    async advance(until: Date, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE missed_fire_checks SET checked_until = greatest(checked_until, $1)`, [until]);
    },

    /** Records the missed time once; false when it was recorded before. */
    async record(triggerId: string, scheduledAt: Date, eventId: string, q: Queryable = db): Promise<boolean> {
      const { rowCount } = await q.query(
        `INSERT INTO trigger_missed_fires (trigger_id, scheduled_at, event_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [triggerId, scheduledAt, eventId],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}
