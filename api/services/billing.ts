import type { Queryable } from '../../db/pool';
import type { AccountsRepository } from '../../db/repositories/accounts';
import { PaymentRequiredError } from '../errors';

/**
 * Charges the account (the one the request acts in) inside the caller's transaction, so the charge and the thing paid for commit
 * or roll back together. Throws 402 when the balance is short, saying the price and the balance (read in
 * the same transaction, after the refused charge), so the caller knows how far short it is. The ledger
 * row records the actor: in a team account, which member spent the balance.
 */
export async function charge(
  accounts: AccountsRepository,
  tx: Queryable,
  input: { accountId: string; amount: number; reason: string; resourceId: string; actorUserId: string },
): Promise<void> {
  if (input.amount <= 0) return;
  const entry = await accounts.applyLedgerEntry({ ...input, amount: -input.amount }, tx);
  if (entry) return;
  const balance = (await accounts.findById(input.accountId, tx))?.balance ?? 0;
  throw new PaymentRequiredError(`Insufficient balance: this costs ${input.amount} units and the balance is ${balance}`);
}
