import type { PageRequest } from '../../db/paging';
import type { PoolClient } from 'pg';
import { withTransaction, type Db } from '../../db/pool';
import type { MemberStatus, StoredPermissions, TeamRepository } from '../../db/repositories/team';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import { toInvitation, toTeamMember } from '../mappers';
import type { CreateTeamMemberInput, UpdateTeamMemberInput } from '../schemas/team';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { mergeOverrides } from './team-permissions';
import { randomToken, sha256 } from './tokens';

const INVITE_TOKEN_PREFIX = 'inv_';

/**
 * The team of the account the caller acts in (its owner and the members with canManageTeam manage it)
 * and the caller's invitations to other accounts. Team writes of one account are serialized (a
 * transaction-scoped lock), and each is audited in its own transaction.
 */
export function createTeamService(deps: { db: Db; team: TeamRepository; audit: AuditTrail }) {
  const { db, team, audit } = deps;

  /** A team write: one transaction holding the account's team lock. */
  const teamWrite = <T>(caller: Caller, fn: (tx: PoolClient) => Promise<T>) =>
    withTransaction(db, async (tx) => {
      await team.lockTeam(caller.accountId, tx);
      return fn(tx);
    });

  return {
    /** The owner is never a member: their address is refused, so they can't be invited, removed or downgraded. */
    async invite(caller: Caller, input: CreateTeamMemberInput) {
      return teamWrite(caller, async (tx) => {
        const ownerEmail = await team.ownerEmail(caller.accountId, tx);
        if (ownerEmail !== null && ownerEmail.toLowerCase() === input.email.toLowerCase()) {
          throw new ValidationError("body.email: is the account owner's own address");
        }
        const permissions: StoredPermissions = { ...input.permissions };
        // Shown once, like a secret: the inviter hands it to the invitee, who proves with it that the
        // invitation reached them (registering an address does not prove owning it).
        const inviteToken = randomToken(INVITE_TOKEN_PREFIX);
        const row = await team.insert(
          caller.accountId,
          { email: input.email, role: input.role, permissions, invitedBy: caller.userId, inviteTokenHash: sha256(inviteToken) },
          tx,
        );
        if (!row) throw new ConflictError(`body.email: ${input.email} is already a member or invited`);
        await audit.record(tx, caller, 'team.invite', row.id);
        return { ...toTeamMember(row), inviteToken };
      });
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

    /** Takes effect on the member's next request: every request reads the membership afresh. */
    async update(caller: Caller, id: string, patch: UpdateTeamMemberInput) {
      return teamWrite(caller, async (tx) => {
        const row = await team.findCurrentForUpdate(caller.accountId, id, tx);
        if (!row) throw new NotFoundError('Team member');
        if (patch.role === undefined && patch.permissions === undefined) return toTeamMember(row);
        const next = {
          role: patch.role ?? row.role,
          permissions: patch.permissions ? mergeOverrides(row.permissions, patch.permissions) : row.permissions,
        };
        // Audited before the change: a member downgrading themselves is still the member who did it.
        await audit.record(tx, caller, 'team.update', id);
        return toTeamMember((await team.update(caller.accountId, id, next, tx))!);
      });
    },

    /** Takes effect on the member's next request, and refuses their writes still under way (audit-trail.ts). */
    async remove(caller: Caller, id: string): Promise<void> {
      await teamWrite(caller, async (tx) => {
        await audit.record(tx, caller, 'team.remove', id);
        if (!(await team.markRemoved(caller.accountId, id, tx))) throw new NotFoundError('Team member');
      });
    },

    async listInvitations(caller: Caller, page: PageRequest) {
      const result = await team.listInvitationsFor(caller.userId, page);
      return { ...result, items: result.items.map(toInvitation) };
    },

    /**
     * Only the addressee holding the invitation's token may accept. To anyone else, and with any other
     * token, the invitation does not exist (404, whatever its state); with both, one that is no longer
     * open answers 409. Audited in the account joined, with the new member as the actor.
     */
    async acceptInvitation(caller: Caller, id: string, token: string) {
      const tokenHash = sha256(token);
      const accepted = await withTransaction(db, async (tx) => {
        const row = await team.accept(caller.userId, id, tokenHash, tx);
        if (row) await audit.recordJoin(tx, row.account_id, caller.userId, row.id);
        return row;
      });
      if (accepted) return toTeamMember(accepted);
      if (await team.existsWithToken(caller.userId, id, tokenHash)) throw new ConflictError('Invitation is no longer open');
      throw new NotFoundError('Invitation');
    },
  };
}
export type TeamService = ReturnType<typeof createTeamService>;
