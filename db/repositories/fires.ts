import type { FireSource } from '../../workflows/types';
import { keysetTail, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';
import type { RunStatus } from './runs';

/** What the fire history shows: 'skipped' (trigger disabled when it ran), the run's status, or 'fired' (no run). */
export type FireState = 'fired' | 'skipped' | RunStatus;

export interface FireListRow {
  id: string;
  source: FireSource;
  run_id: string | null;
  state: FireState;
  scheduled_at: Date | null;
  created_at: Date;
}

/** One fire as `GET …/fires/:fireId` shows it: the list's row and the payload it fired with. */
export interface FireDetailRow extends FireListRow {
  payload: unknown;
}

/** A fire as recordFire writes it. */
export interface NewFire {
  /** Given by the API for manual and hook fires (it answered with it); generated otherwise. */
  id: string | null;
  accountId: string;
  triggerId: string;
  fireKey: string;
  source: FireSource;
  status: 'fired' | 'skipped';
  payload: unknown;
  chainDepth: number;
  scheduledAt: Date | null;
  eventId: string | null;
}

export function createFiresRepository(db: Queryable) {
  return {
    /** Inserts the fire unless its (trigger, fire key) is already recorded; its id, or null for a repeat. */
    async insertOnce(f: NewFire, q: Queryable = db): Promise<string | null> {
      const { rows } = await q.query<{ id: string }>(
        `INSERT INTO fires (id, account_id, trigger_id, fire_key, source, status, payload, chain_depth, scheduled_at, event_id)
         VALUES (coalesce($1::uuid, gen_random_uuid()), $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (trigger_id, fire_key) DO NOTHING RETURNING id`,
        [f.id, f.accountId, f.triggerId, f.fireKey, f.source, f.status, JSON.stringify(f.payload), f.chainDepth, f.scheduledAt, f.eventId],
      );
      return rows[0]?.id ?? null;
    },

    async findByKey(triggerId: string, fireKey: string, q: Queryable = db): Promise<{ id: string; run_id: string | null } | null> {
      const { rows } = await q.query<{ id: string; run_id: string | null }>(
        `SELECT id, run_id FROM fires WHERE trigger_id = $1 AND fire_key = $2`,
        [triggerId, fireKey],
      );
      return rows[0] ?? null;
    },

    async setRun(fireId: string, runId: string, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE fires SET run_id = $2 WHERE id = $1`, [fireId, runId]);
    },

    /** A trigger's fires, newest first, each with the status of the run it started. */
    async listForTrigger(accountId: string, triggerId: string, page: PageRequest, q: Queryable = db): Promise<Page<FireListRow>> {
      const k = keysetTail(page, 3, 'f');
      const { rows } = await q.query<FireListRow & { page_created_at: string }>(
        `SELECT f.id, f.source, f.run_id, f.scheduled_at, f.created_at, f.created_at::text AS page_created_at,
           CASE WHEN f.status = 'skipped' THEN 'skipped' WHEN r.id IS NOT NULL THEN r.status ELSE 'fired' END AS state
         FROM fires f LEFT JOIN runs r ON r.id = f.run_id
         WHERE f.trigger_id = $1 AND f.account_id = $2 ${k.where} ${k.tail}`,
        [triggerId, accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    /** One fire of the trigger with its payload, or null (unknown, or another trigger's or account's). */
    async findForTrigger(accountId: string, triggerId: string, fireId: string, q: Queryable = db): Promise<FireDetailRow | null> {
      const { rows } = await q.query<FireDetailRow>(
        `SELECT f.id, f.source, f.run_id, f.scheduled_at, f.created_at, f.payload,
           CASE WHEN f.status = 'skipped' THEN 'skipped' WHEN r.id IS NOT NULL THEN r.status ELSE 'fired' END AS state
         FROM fires f LEFT JOIN runs r ON r.id = f.run_id
         WHERE f.id = $1 AND f.trigger_id = $2 AND f.account_id = $3`,
        [fireId, triggerId, accountId],
      );
      return rows[0] ?? null;
    },
  };
}
export type FiresRepository = ReturnType<typeof createFiresRepository>;
