import type { ReactNode } from 'react';
import { useActingAccount, type ActingAccount } from './account';

/**
 * What a control needs of the caller's role in the acting account; the same rules the API applies
 * (docs/api.md § Workspaces): the console hides what the API would refuse with a 403.
 */
export type Right = 'write' | 'delete' | 'manageTeam' | 'export' | 'audit';

export function allows(account: ActingAccount | undefined, right: Right): boolean {
  if (!account) return false;
  switch (right) {
    case 'write':
      return account.role !== 'viewer';
    case 'delete':
      return account.permissions.canDelete;
    case 'manageTeam':
      return account.permissions.canManageTeam;
    case 'export':
      return account.permissions.canExport;
    case 'audit':
      return account.role === 'owner' || account.role === 'admin';
  }
}

/** True when the caller's role in the acting account allows `right`. */
export function useCan(right: Right): boolean {
  return allows(useActingAccount(), right);
}

/** Renders its children only for a role that may use them: a viewer sees no write buttons at all. */
export function Can({ right, children, otherwise = null }: { right: Right; children: ReactNode; otherwise?: ReactNode }) {
  return <>{useCan(right) ? children : otherwise}</>;
}
