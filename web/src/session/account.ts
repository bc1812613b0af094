import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { client, type Schemas } from '../api/client';
import { unwrap } from '../api/errors';

export type ActingAccount = Schemas['ActingAccount'];

/** Every account the signed-in user may act in, their own first (GET /api/accounts). */
export function useAccounts() {
  return useQuery({
    queryKey: ['accounts'],
    queryFn: async () => unwrap(await client.GET('/api/accounts')),
    staleTime: 30_000,
  });
}

/** The account the current URL acts in (/w/:accountId/…). */
export function useAccountId(): string {
  const { accountId } = useParams();
  if (!accountId) throw new Error('useAccountId outside a workspace route');
  return accountId;
}

/** The acting account's entry: its name, the caller's role and effective permissions there. */
export function useActingAccount(): ActingAccount | undefined {
  const accountId = useAccountId();
  return useAccounts().data?.find((account) => account.id === accountId);
}

/**
 * A query key in the acting account: every screen's data is keyed by the account it was read in, so that
 * switching accounts never shows one account's data under another's name.
 */
export function useAccountKey(...parts: unknown[]): unknown[] {
  return ['account', useAccountId(), ...parts];
}

/** The balance and name of the acting account (GET /api/account). */
export function useAccountSummary() {
  return useQuery({
    queryKey: useAccountKey('summary'),
    queryFn: async () => unwrap(await client.GET('/api/account')),
  });
}

/** Deployment settings: the agent price, the Temporal UI to link to (GET /api/settings). */
export function useSettings() {
  return useQuery({
    queryKey: ['settings'],
    queryFn: async () => unwrap(await client.GET('/api/settings')),
    staleTime: Infinity,
  });
}
