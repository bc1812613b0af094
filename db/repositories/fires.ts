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

export function createFiresRepository(db: Queryable) {
  return {
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
  };
}
export type FiresRepository = ReturnType<typeof createFiresRepository>;
