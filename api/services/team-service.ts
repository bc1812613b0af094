import type { PageRequest } from '../../db/paging';
import { withTransaction, type Db } from '../../db/pool';
import type { InvitationRow, MemberStatus, StoredPermissions, TeamMemberRow, TeamRepository } from '../../db/repositories/team';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import {
  PERMISSION_KEYS,
  type CreateTeamMemberInput,
  type CustomPermissions,
  type Permissions,
  type TeamRole,
  type UpdateTeamMemberInput,
} from '../schemas/team';
import type { Caller } from './auth-service';

/** Default permissions of each role (DESIGN §4 Team). */
export const ROLE_PERMISSIONS: Readonly<Record<TeamRole, Readonly<Permissions>>> = {
  admin: { canExport: true, canDelete: true, canManageTeam: true },
  editor: { canExport: true, canDelete: true, canManageTeam: false },
  viewer: { canExport: false, canDelete: false, canManageTeam: false },
};

/** The role's defaults overridden by the member's custom booleans. */
export function effectivePermissions(role: TeamRole, custom: CustomPermissions): Permissions {
  const out = { ...ROLE_PERMISSIONS[role] };
  for (const key of PERMISSION_KEYS) {
    const value = custom[key];
    if (typeof value === 'boolean') out[key] = value;
  }
  return out;
}

/** Custom overrides after a patch: a boolean sets the override, null removes it, absent keeps it. */
export function mergeOverrides(current: CustomPermissions, patch: NonNullable<UpdateTeamMemberInput['permissions']>): CustomPermissions {
  const out: CustomPermissions = { ...current };
  for (const key of PERMISSION_KEYS) {
    const value = patch[key];
    if (value === null) delete out[key];
    else if (value !== undefined) out[key] = value;
  }
  return out;
}

const iso = (d: Date) => d.toISOString();

export function toTeamMember(m: TeamMemberRow) {
  return {
    id: m.id,
    accountId: m.account_id,
    email: m.email,
    role: m.role,
    permissions: effectivePermissions(m.role, m.permissions),
    customPermissions: m.permissions,
    status: m.status,
    userId: m.user_id,
    invitedAt: iso(m.invited_at),
    acceptedAt: m.accepted_at ? iso(m.accepted_at) : null,
    removedAt: m.removed_at ? iso(m.removed_at) : null,
    createdAt: iso(m.created_at),
    updatedAt: iso(m.updated_at),
  };
}

export function toInvitation(i: InvitationRow) {
  return {
    id: i.id,
    accountId: i.account_id,
    accountName: i.account_name,
    email: i.email,
    role: i.role,
    permissions: effectivePermissions(i.role, i.permissions),
    invitedAt: iso(i.invited_at),
  };
}

/**
 * Team members of the caller's own account (the account owner manages the team) and the caller's
 * invitations to other accounts.
 */
export function createTeamService(deps: { db: Db; team: TeamRepository }) {
  const { db, team } = deps;

  return {
    async invite(caller: Caller, input: CreateTeamMemberInput) {
      const ownerEmail = await team.ownerEmail(caller.accountId);
      if (ownerEmail !== null && ownerEmail.toLowerCase() === input.email.toLowerCase()) {
        throw new ValidationError("body.email: is the account owner's own address");
      }
      const permissions: StoredPermissions = { ...input.permissions };
      const row = await team.insert(caller.accountId, { email: input.email, role: input.role, permissions, invitedBy: caller.userId });
      if (!row) throw new ConflictError(`body.email: ${input.email} is already a member or invited`);
      return toTeamMember(row);
    },

    async get(caller: Caller, id: string) {
      const row = await team.findCurrent(caller.accountId, id);
      if (!row) throw new NotFoundError('Team member');
      return toTeamMember(row);
    },

    /** Without a status: invited and active members. Removed ones are history, listed only on request. */
    async list(caller: Caller, status: MemberStatus | undefined, page: PageRequest) {
      const result = await team.list(caller.accountId, status ? [status] : ['invited', 'active'], page);
      return { ...result, items: result.items.map(toTeamMember) };
    },

    async update(caller: Caller, id: string, patch: UpdateTeamMemberInput) {
      return withTransaction(db, async (tx) => {
        const row = await team.findCurrentForUpdate(caller.accountId, id, tx);
        if (!row) throw new NotFoundError('Team member');
        if (patch.role === undefined && patch.permissions === undefined) return toTeamMember(row);
        const next = {
          role: patch.role ?? row.role,
          permissions: patch.permissions ? mergeOverrides(row.permissions, patch.permissions) : row.permissions,
        };
        return toTeamMember((await team.update(caller.accountId, id, next, tx))!);
      });
    },

    async remove(caller: Caller, id: string): Promise<void> {
      if (!(await team.markRemoved(caller.accountId, id))) throw new NotFoundError('Team member');
    },

    async listInvitations(caller: Caller, page: PageRequest) {
      const result = await team.listInvitationsFor(caller.userId, page);
      return { ...result, items: result.items.map(toInvitation) };
    },

    /**
     * Only the addressee may accept. To anyone else the invitation does not exist (404, whatever its
     * state); to the addressee, one that is no longer open answers 409.
     */
    async acceptInvitation(caller: Caller, id: string) {
      const accepted = await team.accept(caller.userId, id);
      if (accepted) return toTeamMember(accepted);
      if (await team.findAddressedTo(caller.userId, id)) throw new ConflictError('Invitation is no longer open');
      throw new NotFoundError('Invitation');
    },
  };
}
export type TeamService = ReturnType<typeof createTeamService>;
