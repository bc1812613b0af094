import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

export interface AccountRow {
  id: string;
  owner_user_id: string;
  name: string;
  balance: number;
  created_at: Date;
}

export interface TransactionRow {
  id: string;
  account_id: string;
  amount: number;
  reason: string;
  resource_id: string | null;
  balance_after: number;
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

    /**
     * Moves the balance by `amount` (negative to charge) and writes the ledger entry, in the caller's
     * transaction. A single conditional UPDATE, so concurrent charges can never take the balance below
     * zero. Returns null (and changes nothing) when the balance is too low.
     */
    async applyLedgerEntry(
      input: { accountId: string; amount: number; reason: string; resourceId?: string | null },
      q: Queryable,
    ): Promise<TransactionRow | null> {
      const { rows } = await q.query<TransactionRow>(
        `WITH moved AS (
           UPDATE accounts SET balance = balance + $2, updated_at = now()
           WHERE id = $1 AND balance + $2 >= 0
           RETURNING id, balance
         )
         INSERT INTO account_transactions (account_id, amount, reason, resource_id, balance_after)
         SELECT moved.id, $2, $3, $4, moved.balance FROM moved
         RETURNING id, account_id, amount, reason, resource_id, balance_after, created_at`,
        [input.accountId, input.amount, input.reason, input.resourceId ?? null],
      );
      return rows[0] ?? null;
    },

    async listTransactions(accountId: string, page: PageRequest, q: Queryable = db): Promise<Page<TransactionRow>> {
      const k = keysetTail(page, 2);
      const { rows } = await q.query<TransactionRow & { page_created_at: string }>(
        `SELECT id, account_id, amount, reason, resource_id, balance_after, created_at, ${PAGE_KEY_COLUMNS}
         FROM account_transactions WHERE account_id = $1 ${k.where} ${k.tail}`,
        [accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },
  };
}
export type AccountsRepository = ReturnType<typeof createAccountsRepository>;
