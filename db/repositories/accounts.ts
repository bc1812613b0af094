import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';
import type { StoredPermissions, TeamRole } from './team';

export interface AccountRow {
  id: string;
  owner_user_id: string;
  name: string;
  balance: number;
  created_at: Date;
}

/** An account a user may act in, with their role there (custom permissions: members only). */
export interface ActingAccountRow {
  id: string;
  name: string;
  role: 'owner' | TeamRole;
  permissions: StoredPermissions;
}

/**
 * Sorts the user's own account before every membership in GET /api/accounts while keeping the one keyset
 * order of every list (created_at, id descending): no membership is made in the year 9999.
 */
const OWN_ACCOUNT_FIRST = `timestamptz '9999-12-31 00:00:00+00'`;

export interface TransactionRow {
  id: string;
  account_id: string;
  amount: number;
  reason: string;
  resource_id: string | null;
  balance_after: number;
  /** Who spent or credited it; null for the platform (the initial grant). */
  actor_user_id: string | null;
  created_at: Date;
}

export function createAccountsRepository(db: Queryable) {
  return {
    async insert(input: { ownerUserId: string; name: string }, q: Queryable = db): Promise<AccountRow> {
      const { rows } = await q.query<AccountRow>(
        `INSERT INTO accounts (owner_user_id, name, balance) VALUES ($1, $2, 0)
         RETURNING id, owner_user_id, name, balance, created_at`,
        [input.ownerUserId, input.name],
      );
      return rows[0]!;
    },

    async findByOwner(userId: string, q: Queryable = db): Promise<AccountRow | null> {
      const { rows } = await q.query<AccountRow>(
        `SELECT id, owner_user_id, name, balance, created_at FROM accounts WHERE owner_user_id = $1`,
        [userId],
      );
      return rows[0] ?? null;
    },

    async findById(id: string, q: Queryable = db): Promise<AccountRow | null> {
      const { rows } = await q.query<AccountRow>(
        `SELECT id, owner_user_id, name, balance, created_at FROM accounts WHERE id = $1`,
        [id],
      );
      return rows[0] ?? null;
    },

    /** The accounts the user may act in: their own first, then their active memberships, newest first. */
    async listActingAccounts(userId: string, page: PageRequest, q: Queryable = db): Promise<Page<ActingAccountRow>> {
      const k = keysetTail(page, 2);
      const { rows } = await q.query<ActingAccountRow & { page_created_at: string }>(
        `SELECT id, name, role, permissions, ${PAGE_KEY_COLUMNS} FROM (
           SELECT a.id, a.name, 'owner' AS role, '{}'::jsonb AS permissions, ${OWN_ACCOUNT_FIRST} AS created_at
           FROM accounts a WHERE a.owner_user_id = $1
           UNION ALL
           SELECT a.id, a.name, m.role, m.permissions, m.created_at
           FROM team_members m JOIN accounts a ON a.id = m.account_id
           WHERE m.user_id = $1 AND m.status = 'active'
         ) acting
         WHERE true ${k.where} ${k.tail}`,
        [userId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    /**
     * Moves the balance by `amount` (negative to charge) and writes the ledger entry, in the caller's
     * transaction. A single conditional UPDATE, so concurrent charges can never take the balance below
     * zero. Returns null (and changes nothing) when the balance is too low.
     */
    async applyLedgerEntry(
      input: { accountId: string; amount: number; reason: string; resourceId?: string | null; actorUserId: string | null },
      q: Queryable,
    ): Promise<TransactionRow | null> {
      const { rows } = await q.query<TransactionRow>(
        `WITH moved AS (
           UPDATE accounts SET balance = balance + $2, updated_at = now()
           WHERE id = $1 AND balance + $2 >= 0
           RETURNING id, balance
         )
         INSERT INTO account_transactions (account_id, amount, reason, resource_id, balance_after, actor_user_id)
         SELECT moved.id, $2, $3, $4, moved.balance, $5 FROM moved
         RETURNING id, account_id, amount, reason, resource_id, balance_after, actor_user_id, created_at`,
        [input.accountId, input.amount, input.reason, input.resourceId ?? null, input.actorUserId],
      );
      return rows[0] ?? null;
    },

    async listTransactions(accountId: string, page: PageRequest, q: Queryable = db): Promise<Page<TransactionRow>> {
      const k = keysetTail(page, 2);
      const { rows } = await q.query<TransactionRow & { page_created_at: string }>(
        `SELECT id, account_id, amount, reason, resource_id, balance_after, actor_user_id, created_at, ${PAGE_KEY_COLUMNS}
         FROM account_transactions WHERE account_id = $1 ${k.where} ${k.tail}`,
        [accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },
  };
}
export type AccountsRepository = ReturnType<typeof createAccountsRepository>;
