import type { Queryable } from '../../db/pool';
import type { QuotasRepository } from '../../db/repositories/quotas';
import { ForbiddenError, NotFoundError } from '../errors';

/** A quota (docs/api.md § Quotas and charges): `{ limit: 100, plural: 'webhooks' }` → "at most 100 webhooks per account". */
export interface Quota {
  limit: number;
  plural: string;
}

function refuseOver(count: number, quota: Quota, per: 'account' | 'agent'): void {
  if (count >= quota.limit) throw new ForbiddenError(`at most ${quota.limit} ${quota.plural} per ${per}`);
}

/**
 * Call in the transaction that inserts, right before the insert: locks the account row, counts, and
 * refuses (403) a create over the quota. The lock makes concurrent creates count one after another,
 * so the quota is exact (db/repositories/quotas.ts).
 */
export async function withinAccountQuota(
  quotas: QuotasRepository,
  tx: Queryable,
  accountId: string,
  quota: Quota,
  count: (accountId: string, q: Queryable) => Promise<number>,
): Promise<void> {
  if (!(await quotas.lockAccount(accountId, tx))) throw new NotFoundError('Account');
  refuseOver(await count(accountId, tx), quota, 'account');
}

/** The same per agent, on the agent row; 404 when the agent is not (or no longer) the account's. */
export async function withinAgentQuota(
  quotas: QuotasRepository,
  tx: Queryable,
  accountId: string,
  agentId: string,
  quota: Quota,
  count: (agentId: string, q: Queryable) => Promise<number>,
): Promise<void> {
  if (!(await quotas.lockAgent(accountId, agentId, tx))) throw new NotFoundError('Agent');
  refuseOver(await count(agentId, tx), quota, 'agent');
}

/**
 * The same refusal ahead of slow checks (a URL's lookup): a create whose quota is already full answers 403
 * before it waits on anything. `adding` is how many the request would add (an import's tools). Not the
 * final word: the inserting transaction counts again under its lock.
 */
export async function refuseWhenFull(quota: Quota, per: 'account' | 'agent', count: () => Promise<number>, adding = 1): Promise<void> {
  refuseOver((await count()) + adding - 1, quota, per);
}
