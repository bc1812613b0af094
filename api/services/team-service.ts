import type { PageRequest } from '../../db/paging';
import type { PoolClient } from 'pg';
import { withTransaction, type Db } from '../../db/pool';
import type { MemberStatus, StoredPermissions, TeamRepository } from '../../db/repositories/team';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors';
import { toInvitation, toTeamMember } from '../mappers';
import type { CreateTeamMemberInput, CustomPermissions, TeamRole, UpdateTeamMemberInput } from '../schemas/team';
import { memberCaller, refusal } from './access';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { beyond, effectivePermissions, mergeOverrides, type Holding } from './team-permissions';
import { randomToken, sha256 } from './tokens';

const INVITE_TOKEN_PREFIX = 'inv_';

/** The caller acting in a team write, as the account's team stands once the write holds its lock. */
type TeamActor = { kind: 'owner' } | { kind: 'member'; memberId: string; holding: Holding };

/**
 * Refuses (403, naming the rule) a grant beyond what the actor holds: a role above their own, or a
 * permission they lack. The owner may grant anything.
 */
function checkGrant(actor: TeamActor, granted: Holding): void {
  if (actor.kind === 'owner') return;
  const excess = beyond(actor.holding, granted);
  if (excess.length === 0) return;
  if (excess[0]!.endsWith(' role')) {
    throw new ForbiddenError(`Cannot grant ${excess[0]}: a member grants at most their own role (${actor.holding.role})`);
  }
  throw new ForbiddenError(`Cannot grant ${excess.join(', ')}: a member grants only permissions they hold`);
}

/** Refuses (403) a change to, or the removal of, a member who holds more than the actor. The owner may. */
function checkTarget(actor: TeamActor, target: Holding, verb: 'change' | 'remove'): void {
  if (actor.kind === 'owner') return;
  const excess = beyond(actor.holding, target);
  if (excess.length > 0) throw new ForbiddenError(`Cannot ${verb} a member who holds more than you (${excess.join(', ')})`);
}

/** What a member holds, or would hold: the role and the effective permissions of its overrides. */
const holdingOf = (row: { role: TeamRole; permissions: CustomPermissions }): Holding => ({
  role: row.role,
  permissions: effectivePermissions(row.role, row.permissions),
});

/**
 * The team of the account the caller acts in (its owner and the members with canManageTeam manage it)
 * and the caller's invitations to other accounts. Team writes of one account are serialized (a
 * transaction-scoped lock), and each is audited in its own transaction.
 *
 * No one grants more than they hold: a member invites, or sets, a role up to their own and permissions
 * they hold; they change or remove no one who holds more than they do, and never change their own
 * membership (leaving, removing it, is allowed). The owner may do anything. Every rule is checked before
 * anything is written.
 */
export function createTeamService(deps: { db: Db; team: TeamRepository; audit: AuditTrail; invitationTtlMs: number }) {
  const { db, team, audit } = deps;

  /**
   * Withdraws the pending invitations `inviterUserId` sent that grant more than `holding` (all of them when
   * null: removed, or without canManageTeam) — docs/api.md § Team and invitations.
   */
  async function withdrawBeyond(tx: PoolClient, accountId: string, inviterUserId: string | null, holding: Holding | null): Promise<void> {
    if (inviterUserId === null) return;
    const pending = await team.pendingInvitationsBy(accountId, inviterUserId, tx);
    const withdrawn = pending.filter((inv) => !withinInviter(holding, inv));
    await team.withdrawInvitations(accountId, withdrawn.map((inv) => inv.id), tx);
  }

  /** Whether an invitation is one its inviter may (still) send: they manage the team and hold what it grants. */
  function withinInviter(holding: Holding | 'owner' | null, invitation: { role: TeamRole; permissions: CustomPermissions }): boolean {
    if (holding === 'owner') return true;
    if (holding === null || !holding.permissions.canManageTeam) return false;
    return beyond(holding, holdingOf(invitation)).length === 0;
  }

  /**
   * A team write: one transaction holding the account's team lock, given the caller's rights as they are
   * now. The request was authenticated before the lock; a team write that held it meanwhile may have
   * changed or removed the caller's membership, so it is read again (and held) here: a member removed gets
   * 404 as for any account they may not act in, one who lost canManageTeam 403, and every cap below uses
   * the role and permissions they hold now.
   */
  const teamWrite = <T>(caller: Caller, fn: (tx: PoolClient, actor: TeamActor) => Promise<T>, leavingId?: string) =>
    withTransaction(db, async (tx) => {
      await team.lockTeam(caller.accountId, tx);
      if (caller.role === 'owner') return fn(tx, { kind: 'owner' });
      const membership = await team.holdMembership(caller.accountId, caller.userId, tx);
      if (!membership) throw new NotFoundError('Account');
      const current = memberCaller(caller.userId, caller.accountId, membership.role, membership.permissions);
      // Leaving, the removal of one's own membership, needs no right; every other team write canManageTeam.
      const refused = membership.id === leavingId ? null : refusal('manageTeam', current);
      if (refused) throw new ForbiddenError(refused);
      return fn(tx, { kind: 'member', memberId: membership.id, holding: { role: membership.role, permissions: current.permissions } });
    });

  return {
    /** The owner is never a member: their address is refused, so they can't be invited, removed or downgraded. */
    async invite(caller: Caller, input: CreateTeamMemberInput) {
      return teamWrite(caller, async (tx, actor) => {
        checkGrant(actor, holdingOf({ role: input.role, permissions: input.permissions ?? {} }));
        const ownerEmail = await team.ownerEmail(caller.accountId, tx);
        if (ownerEmail !== null && ownerEmail.toLowerCase() === input.email.toLowerCase()) {
          throw new ValidationError("body.email: is the account owner's own address");
        }
        const permissions: StoredPermissions = { ...input.permissions };
        // Shown once, like a secret: the inviter hands it to the invitee, who proves with it that the
        // invitation reached them (registering an address does not prove owning it).
        const inviteToken = randomToken(INVITE_TOKEN_PREFIX);
        // An expired invitation to this address no longer holds it.
        await team.withdrawExpired(caller.accountId, input.email, tx);
        const row = await team.insert(
          caller.accountId,
          {
            email: input.email,
            role: input.role,
            permissions,
            invitedBy: caller.userId,
            inviteTokenHash: sha256(inviteToken),
            ttlMs: deps.invitationTtlMs,
          },
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

    /**
     * Takes effect on the member's next request: every request reads the membership afresh. The member as
     * it is must be within the caller's own, and so must the result (the role, and the overrides merged,
     * a null putting the role's default back); one's own membership is refused whatever the body.
     */
    async update(caller: Caller, id: string, patch: UpdateTeamMemberInput) {
      return teamWrite(caller, async (tx, actor) => {
        const row = await team.findCurrentForUpdate(caller.accountId, id, tx);
        if (!row) throw new NotFoundError('Team member');
        if (actor.kind === 'member' && actor.memberId === row.id) {
          throw new ForbiddenError(
            'A member cannot change their own membership (role or permissions); leaving, DELETE of your own membership, is allowed',
          );
        }
        checkTarget(actor, holdingOf(row), 'change');
        if (patch.role === undefined && patch.permissions === undefined) return toTeamMember(row);
        const next = {
          role: patch.role ?? row.role,
          permissions: patch.permissions ? mergeOverrides(row.permissions, patch.permissions) : row.permissions,
        };
        checkGrant(actor, holdingOf(next));
        await audit.record(tx, caller, 'team.update', id);
        const updated = (await team.update(caller.accountId, id, next, tx))!;
        if (row.status === 'active') await withdrawBeyond(tx, caller.accountId, row.user_id, holdingOf(next));
        return toTeamMember(updated);
      });
    },

    /**
     * Takes effect on the member's next request, and refuses their writes still under way (audit-trail.ts).
     * Any member may remove themselves (leave, no right needed); with canManageTeam, anyone who holds no more
     * than they do.
     */
    async remove(caller: Caller, id: string): Promise<void> {
      await teamWrite(
        caller,
        async (tx, actor) => {
          const row = await team.findCurrentForUpdate(caller.accountId, id, tx);
          if (!row) throw new NotFoundError('Team member');
          if (!(actor.kind === 'member' && actor.memberId === row.id)) checkTarget(actor, holdingOf(row), 'remove');
          await audit.record(tx, caller, 'team.remove', id);
          await team.markRemoved(caller.accountId, id, tx);
          if (row.status === 'active') await withdrawBeyond(tx, caller.accountId, row.user_id, null);
        },
        id,
      );
    },

    async listInvitations(caller: Caller, page: PageRequest) {
      const result = await team.listInvitationsFor(caller.userId, page);
      return { ...result, items: result.items.map(toInvitation) };
    },

    /**
     * Only the addressee holding the invitation's token may accept. To anyone else, and with any other
     * token, the invitation does not exist (404, whatever its state); with both, one that is no longer
     * open answers 409, naming when it expired if that is why. Audited in the account joined, with the new
     * member as the actor.
     */
    async acceptInvitation(caller: Caller, id: string, token: string) {
      const tokenHash = sha256(token);
      const accepted = await withTransaction(db, async (tx) => {
        // Under the account's team lock, so no team write changes the inviter's rights meanwhile.
        const accountId = await team.invitingAccount(caller.userId, id, tokenHash, tx);
        if (accountId === null) return null;
        await team.lockTeam(accountId, tx);
        const invitation = await team.findCurrentForUpdate(accountId, id, tx);
        if (invitation?.status !== 'invited') return null;
        // The inviter's rights are checked again: an invitation grants no more than its sender holds now.
        const inviter = await team.currentHolding(accountId, invitation.invited_by, tx);
        const holding = inviter === null || inviter === 'owner' ? inviter : holdingOf(inviter);
        if (!withinInviter(holding, invitation)) {
          await team.withdrawInvitations(accountId, [id], tx);
          return 'withdrawn' as const;
        }
        const row = await team.accept(caller.userId, id, tokenHash, tx);
        if (row) await audit.recordJoin(tx, row.account_id, caller.userId, row.id);
        return row;
      });
      if (accepted === 'withdrawn') throw new ConflictError('Invitation was withdrawn: the member who sent it no longer holds the rights it grants');
      if (accepted) return toTeamMember(accepted);
      const found = await team.findWithToken(caller.userId, id, tokenHash);
      if (!found) throw new NotFoundError('Invitation');
      if (found.status === 'invited' && found.expired) {
        throw new ConflictError(found.expires_at ? `Invitation expired at ${found.expires_at.toISOString()}` : 'Invitation has expired');
      }
      throw new ConflictError('Invitation is no longer open');
    },
  };
}
export type TeamService = ReturnType<typeof createTeamService>;
