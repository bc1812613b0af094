import type { PageRequest } from '../../db/paging';
import type { Queryable } from '../../db/pool';
import type { AccountsRepository } from '../../db/repositories/accounts';
import { createUsageRepository } from '../../db/repositories/usage';
import { NotFoundError, ValidationError } from '../errors';
import { toAccount, toActingAccount, toTransaction, toUsageDay, type UsageDay } from '../mappers';
import { MAX_USAGE_DAYS } from '../schemas/account';
import type { Caller } from './auth-service';

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const msOf = (date: string) => Date.parse(`${date}T00:00:00Z`);

export function createAccountService(deps: { db: Queryable; accounts: AccountsRepository }) {
  const usage = createUsageRepository(deps.db);
  return {
    /**
     * The account's use per UTC day from `from` to `to` (inclusive), oldest first, a day with nothing
     * included as zeros: by default the last 30 days to today. More than MAX_USAGE_DAYS days, or `from`
     * after `to`, is refused (400 naming the rule).
     */
    async usage(caller: Caller, range: { from?: string; to?: string }): Promise<UsageDay[]> {
      const to = range.to ?? dayOf(Date.now());
      const from = range.from ?? dayOf(msOf(to) - 29 * DAY_MS);
      if (msOf(from) > msOf(to)) throw new ValidationError(`querystring.from: must not be after to (${from} > ${to})`);
      const days = (msOf(to) - msOf(from)) / DAY_MS + 1;
      if (days > MAX_USAGE_DAYS) throw new ValidationError(`querystring: from ${from} to ${to} is ${days} days; at most ${MAX_USAGE_DAYS} days per request`);
      return (await usage.listUsageDays(caller.accountId, from, to)).map(toUsageDay);
    },

    async get(caller: Caller) {
      const account = await deps.accounts.findById(caller.accountId);
      if (!account) throw new NotFoundError('Account');
      return toAccount(account);
    },

    /** The accounts the caller may act in (whichever account this request acts in): their own first. */
    async listActingAccounts(caller: Caller, page: PageRequest) {
      const result = await deps.accounts.listActingAccounts(caller.userId, page);
      return { ...result, items: result.items.map(toActingAccount) };
    },

    async listTransactions(caller: Caller, page: PageRequest) {
      const result = await deps.accounts.listTransactions(caller.accountId, page);
      return { ...result, items: result.items.map(toTransaction) };
    },
  };
}
export type AccountService = ReturnType<typeof createAccountService>;
