import type { PageRequest } from '../../db/paging';
import type { AccountsRepository } from '../../db/repositories/accounts';
import { NotFoundError } from '../errors';
import { toAccount, toActingAccount, toTransaction } from '../mappers';
import type { Caller } from './auth-service';

export function createAccountService(deps: { accounts: AccountsRepository }) {
  return {
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
