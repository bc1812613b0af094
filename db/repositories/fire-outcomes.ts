import type { Queryable } from '../pool';
import type { DeliveryStatus } from './deliveries';
import type { RunStatus } from './runs';

/** The run a fire started, as far as it has got. */
export interface FireRunRow {
  fire_id: string;
  run_id: string;
  run_status: RunStatus;
}

/** A delivery one of a fire's events was handed to (the fire's own event, or the result of the run it started). */
export interface FireDeliveryRow {
  fire_id: string;
  id: string;
  webhook_id: string;
  webhook_name: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

/**
 * What became of fires after they were recorded (a trigger's timeline, GET …/timeline and
 * GET …/fires/:fireId/deliveries): the run each started and every delivery of the events that followed —
 * the fire's own `agent.triggered` / `trigger.fired`, and the `agent.completed` / `agent.failed` of its run.
 * Each event is written in the transaction that records its cause (engine/fires/record-fire.ts, engine/runs/end.ts),
 * so it is found by index on (account, created_at) — the fire's created_at, the run's finished_at — and
 * then by the id its data names; deliveries by event (their unique (event_id, webhook_id)). Each query
 * takes the fires of one page at once.
 */
export function createFireOutcomesRepository(db: Queryable) {
  return {
    async runs(accountId: string, fireIds: string[], q: Queryable = db): Promise<FireRunRow[]> {
      if (fireIds.length === 0) return [];
      const { rows } = await q.query<FireRunRow>(
        `SELECT f.id AS fire_id, r.id AS run_id, r.status AS run_status
         FROM fires f JOIN runs r ON r.id = f.run_id
         WHERE f.id = ANY($2::uuid[]) AND f.account_id = $1`,
        [accountId, fireIds],
      );
      return rows;
    },

    /**
     * Oldest first per fire (deliveries made at once: by webhook name); with `perFire`, the first that many of
     * each fire, each row counting its fire's deliveries in all (`fire_total`).
     */
    async deliveries(accountId: string, fireIds: string[], perFire: number | null = null, q: Queryable = db): Promise<(FireDeliveryRow & { fire_total: number })[]> {
      if (fireIds.length === 0) return [];
      const { rows } = await q.query<FireDeliveryRow & { fire_total: number }>(`SELECT * FROM (
         SELECT *, row_number() OVER (PARTITION BY fire_id ORDER BY created_at, webhook_name, id) AS place,
           count(*) OVER (PARTITION BY fire_id)::int AS fire_total FROM (${DELIVERIES_OF_FIRES}) listed
         ) placed WHERE $3::int IS NULL OR place <= $3 ORDER BY fire_id, place`,
        [accountId, fireIds, perFire],
      );
      return rows;
    },
  };
}
export type FireOutcomesRepository = ReturnType<typeof createFireOutcomesRepository>;

/** Every delivery of the fires $2 of account $1: their own events' and their runs' results'. */
const DELIVERIES_OF_FIRES = `WITH fired AS (
           SELECT f.id AS fire_id, f.created_at, r.id AS run_id, r.finished_at
           FROM fires f LEFT JOIN runs r ON r.id = f.run_id
           WHERE f.id = ANY($2::uuid[]) AND f.account_id = $1 AND f.status = 'fired'
         ), fire_events AS (
           SELECT fired.fire_id, e.id AS event_id FROM fired
           JOIN events e ON e.account_id = $1 AND e.created_at = fired.created_at
             AND e.type IN ('agent.triggered', 'trigger.fired') AND e.data->>'fireId' = fired.fire_id::text
           UNION ALL
           SELECT fired.fire_id, e.id FROM fired
           JOIN events e ON e.account_id = $1 AND e.created_at = fired.finished_at
             AND e.type IN ('agent.completed', 'agent.failed') AND e.data->>'runId' = fired.run_id::text
           WHERE fired.finished_at IS NOT NULL
         )
         SELECT fe.fire_id, d.id, d.webhook_id, w.name AS webhook_name, d.event_id, e.type AS event_type, d.status, d.attempts,
                d.last_status_code, d.last_error, d.next_attempt_at, d.created_at
         FROM fire_events fe
         JOIN deliveries d ON d.event_id = fe.event_id
         JOIN events e ON e.id = d.event_id
         JOIN webhooks w ON w.id = d.webhook_id
         WHERE d.account_id = $1`;
