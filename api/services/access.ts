import type { Permissions, TeamRole } from '../schemas/team';
import { effectivePermissions } from './team-permissions';

/** The caller's place in the account a request acts in: its owner, or an active member with a role. */
export type AccountRole = 'owner' | TeamRole;

/**
 * Who is calling and where: the user, the account the request acts in (their own, or the one named by
 * the `Account-Id` header), their role there and their effective permissions. Resolved once per request
 * by the authentication hook (plugins/authenticate.ts), from the database, so a removal or a downgrade
 * takes effect on the member's next request.
 */
export interface Caller {
  userId: string;
  accountId: string;
  role: AccountRole;
  permissions: Permissions;
}

/** Effective permissions of a role: the owner may do everything; a member has the role's defaults overridden by their custom ones. */
export function permissionsFor(role: AccountRole, custom: Partial<Permissions>): Permissions {
  return role === 'owner' ? { canExport: true, canDelete: true, canManageTeam: true } : effectivePermissions(role, custom);
}

export function ownerCaller(userId: string, accountId: string): Caller {
  return { userId, accountId, role: 'owner', permissions: permissionsFor('owner', {}) };
}

export function memberCaller(userId: string, accountId: string, role: TeamRole, custom: Partial<Permissions>): Caller {
  return { userId, accountId, role, permissions: permissionsFor(role, custom) };
}

/**
 * What a route needs of the caller's role in the account it acts in. Every authenticated route declares
 * one (`config: { access }`); a route without one stops the app at start-up.
 * - read: any role (every GET of the account's resources).
 * - write: owner, admin or editor (POST, PUT, PATCH: create, update, fire, run, test, retry, graph, import).
 * - delete: canDelete (DELETE of any resource).
 * - manageTeam: canManageTeam (POST/PUT/PATCH under /api/team).
 * - teamRemove: canManageTeam, or the caller's own membership (leaving needs no right): decided by the team
 *   service, which knows whose membership `DELETE /api/team/:id` names.
 * - export: canExport (GET /api/agents/:id/export).
 * - audit: owner or admin (GET /api/account/audit).
 * - self: nothing of the account: the caller's own user, API keys, invitations and list of accounts.
 */
export const ACCESS_RULES = ['read', 'write', 'delete', 'manageTeam', 'teamRemove', 'export', 'audit', 'self'] as const;
export type Access = (typeof ACCESS_RULES)[number];

/** Why the caller may not do what `access` names, as a 403's message; null when they may. */
export function refusal(access: Access, caller: Caller): string | null {
  switch (access) {
    case 'read':
    case 'self':
    case 'teamRemove': // the team service refuses a removal of another member without canManageTeam
      return null;
    case 'write':
      return caller.role === 'viewer'
        ? 'The editor or admin role is required: viewers have read-only access to this account'
        : null;
    case 'delete':
      return caller.permissions.canDelete ? null : 'canDelete is required';
    case 'manageTeam':
      return caller.permissions.canManageTeam ? null : 'canManageTeam is required';
    case 'export':
      return caller.permissions.canExport ? null : 'canExport is required';
    case 'audit':
      return caller.role === 'owner' || caller.role === 'admin' ? null : 'The admin role is required to read the audit log';
  }
}
