import { keysetTail, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

export interface AuditRow {
  id: string;
  account_id: string;
  actor_user_id: string | null;
  actor_email: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  created_at: Date;
}

/** The audit log of each account: every write with its actor (GET /api/account/audit). */
export function createAuditRepository(db: Queryable) {
  return {
    /** Call inside the write's transaction, so the entry commits or rolls back with it. A null actor: the platform itself (the engine). */
    async insert(
      entry: { accountId: string; actorUserId: string | null; action: string; resourceType: string; resourceId: string | null },
      q: Queryable,
    ): Promise<void> {
      await q.query(
        `INSERT INTO audit_log (account_id, actor_user_id, action, resource_type, resource_id) VALUES ($1, $2, $3, $4, $5)`,
        [entry.accountId, entry.actorUserId, entry.action, entry.resourceType, entry.resourceId],
      );
    },

    /** Newest first; the actor's email as it is now (null when the user no longer exists). */
    async list(accountId: string, page: PageRequest, q: Queryable = db): Promise<Page<AuditRow>> {
      const k = keysetTail(page, 2, 'l');
      const { rows } = await q.query<AuditRow & { page_created_at: string }>(
        `SELECT l.id, l.account_id, l.actor_user_id, u.email AS actor_email, l.action, l.resource_type, l.resource_id, l.created_at,
           l.created_at::text AS page_created_at
         FROM audit_log l LEFT JOIN users u ON u.id = l.actor_user_id
         WHERE l.account_id = $1 ${k.where} ${k.tail}`,
        [accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },
  };
}
export type AuditRepository = ReturnType<typeof createAuditRepository>;
