import type { Queryable } from '../../db/pool';
import type { AccountsRepository } from '../../db/repositories/accounts';
import { PaymentRequiredError } from '../errors';

/**
 * Charges the account inside the caller's transaction, so the charge and the thing paid for commit
 * or roll back together. Throws 402 when the balance is short.
 */
export async function charge(
  accounts: AccountsRepository,
  tx: Queryable,
  input: { accountId: string; amount: number; reason: string; resourceId: string },
): Promise<void> {
  if (input.amount <= 0) return;
  const entry = await accounts.applyLedgerEntry({ ...input, amount: -input.amount }, tx);
  if (!entry) throw new PaymentRequiredError(`Insufficient balance: this costs ${input.amount} units`);
}
