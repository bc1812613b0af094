import type { Queryable } from '../pool';

/**
 * The count-and-lock half of a quota check (docs/api.md § Quotas and charges). A create locks the row its quota belongs to
 * (the account, or the agent) before counting, in the transaction that inserts: a concurrent create
 * of the same kind waits on the lock and then counts with a fresh snapshot (a new statement under
 * READ COMMITTED), so it sees the row inserted before it and no quota is ever overshot.
 *
 * FOR NO KEY UPDATE: it serialises quota checks with each other (and with balance updates on the
 * account) but not with the foreign-key checks of inserts elsewhere, which take FOR KEY SHARE.
 * A create that also needs an agent to stay (a linked trigger) takes the agent before the account,
 * in the order agent updates take them (agent, then the account they charge), so no cycle can form.
 */
export function createQuotasRepository(db: Queryable) {
  const count = async (sql: string, params: unknown[], q: Queryable) => (await q.query<{ n: number }>(sql, params)).rows[0]!.n;

  return {
    /** False when the account is gone. Call inside the inserting transaction, before counting. */
    async lockAccount(accountId: string, q: Queryable): Promise<boolean> {
      const { rowCount } = await q.query(`SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, [accountId]);
      return rowCount === 1;
    },

    /** False when the agent is not (or no longer) the account's. Call inside the inserting transaction, before counting. */
    async lockAgent(accountId: string, agentId: string, q: Queryable): Promise<boolean> {
      const { rowCount } = await q.query(`SELECT 1 FROM agents WHERE id = $1 AND account_id = $2 FOR NO KEY UPDATE`, [agentId, accountId]);
      return rowCount === 1;
    },

    /** Keeps the agent from being deleted until commit (as an insert's foreign key would). False when it is not the account's. */
    async keepAgent(accountId: string, agentId: string, q: Queryable): Promise<boolean> {
      const { rowCount } = await q.query(`SELECT 1 FROM agents WHERE id = $1 AND account_id = $2 FOR KEY SHARE`, [agentId, accountId]);
      return rowCount === 1;
    },

    /** Agent and user triggers together. */
    countTriggers: (accountId: string, q: Queryable = db) => count(`SELECT count(*)::int AS n FROM triggers WHERE account_id = $1`, [accountId], q),

    countWebhooks: (accountId: string, q: Queryable = db) => count(`SELECT count(*)::int AS n FROM webhooks WHERE account_id = $1`, [accountId], q),

    countTools: (agentId: string, q: Queryable = db) => count(`SELECT count(*)::int AS n FROM tools WHERE agent_id = $1`, [agentId], q),

    countConnectors: (agentId: string, q: Queryable = db) => count(`SELECT count(*)::int AS n FROM connectors WHERE agent_id = $1`, [agentId], q),
  };
}
export type QuotasRepository = ReturnType<typeof createQuotasRepository>;
