import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

export type TeamRole = 'admin' | 'editor' | 'viewer';
export type MemberStatus = 'invited' | 'active' | 'removed';
export type StoredPermissions = Partial<Record<'canExport' | 'canDelete' | 'canManageTeam', boolean>>;

export interface TeamMemberRow {
  id: string;
  account_id: string;
  email: string;
  role: TeamRole;
  permissions: StoredPermissions;
  status: MemberStatus;
  user_id: string | null;
  invited_by: string | null;
  invited_at: Date;
  /** When the invitation stops being open (null on rows that never were an open invitation with an expiry). */
  expires_at: Date | null;
  accepted_at: Date | null;
  removed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface InvitationRow {
  id: string;
  account_id: string;
  account_name: string;
  email: string;
  role: TeamRole;
  permissions: StoredPermissions;
  invited_at: Date;
  expires_at: Date;
}

const COLUMNS = `id, account_id, email, role, permissions, status, user_id, invited_by, invited_at, expires_at, accepted_at,
  removed_at, created_at, updated_at`;

/** The caller's address, compared case-insensitively (the users index is on lower(email)). */
const ADDRESSED_TO = `lower(email) = (SELECT lower(u.email) FROM users u WHERE u.id = $1)`;

function isEmailTaken(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === '23505' && e.constraint === 'team_members_email_key';
}

export function createTeamRepository(db: Queryable) {
  return {
    /** Email of the user who owns the account. */
    async ownerEmail(accountId: string, q: Queryable = db): Promise<string | null> {
      const { rows } = await q.query<{ email: string }>(
        `SELECT u.email FROM accounts a JOIN users u ON u.id = a.owner_user_id WHERE a.id = $1`,
        [accountId],
      );
      return rows[0]?.email ?? null;
    },

    /**
     * The active memberships among (account, user) pairs: the acting-account check of requests that name
     * another account, several requests' checks in one query (one probe of team_members_active_user each).
     */
    async findActiveMemberships(
      pairs: readonly { accountId: string; userId: string }[],
      q: Queryable = db,
    ): Promise<{ account_id: string; user_id: string; role: TeamRole; permissions: StoredPermissions }[]> {
      // Named: prepared once per connection, so the hot path skips parsing and planning it each time.
      const { rows } = await q.query<{ account_id: string; user_id: string; role: TeamRole; permissions: StoredPermissions }>({
        name: 'team-active-memberships',
        text: `SELECT m.account_id, m.user_id, m.role, m.permissions
               FROM unnest($1::uuid[], $2::uuid[]) AS wanted (account_id, user_id)
               JOIN team_members m ON m.account_id = wanted.account_id AND m.user_id = wanted.user_id AND m.status = 'active'`,
        values: [pairs.map((p) => p.accountId), pairs.map((p) => p.userId)],
      });
      return rows;
    },

    /**
     * Whether the user is still an active member of the account, holding their membership row (FOR SHARE)
     * until the transaction ends: a removal committed before this statement is seen (false), and one that
     * comes after waits for the transaction to end. Under READ COMMITTED a removal this statement waited
     * for is seen too (the row is checked again once its lock is released).
     */
    async holdActiveMembership(accountId: string, userId: string, q: Queryable): Promise<boolean> {
      const { rows } = await q.query(
        `SELECT 1 FROM team_members WHERE account_id = $1 AND user_id = $2 AND status = 'active' FOR SHARE`,
        [accountId, userId],
      );
      return rows.length > 0;
    },

    /**
     * The user's active membership of the account, held (FOR SHARE) until the transaction ends; null when
     * they are not an active member. Read by a team write after it took the account's team lock, so it is
     * the membership as the last team write left it.
     */
    async holdMembership(
      accountId: string,
      userId: string,
      q: Queryable,
    ): Promise<{ id: string; role: TeamRole; permissions: StoredPermissions } | null> {
      const { rows } = await q.query<{ id: string; role: TeamRole; permissions: StoredPermissions }>(
        `SELECT id, role, permissions FROM team_members WHERE account_id = $1 AND user_id = $2 AND status = 'active' FOR SHARE`,
        [accountId, userId],
      );
      return rows[0] ?? null;
    },

    /**
     * Serializes the team writes of one account (invite, update, remove) until the transaction ends, so
     * two of them never wait on each other's membership rows in opposite orders (an admin removing another
     * while being removed by them).
     */
    async lockTeam(accountId: string, q: Queryable): Promise<void> {
      await q.query(`SELECT pg_advisory_xact_lock(hashtext('team'), hashtext($1::text))`, [accountId]);
    },

    /**
     * An invitation open for `ttlMs` from now (the database's clock, which accepting compares with). Returns
     * null when a non-removed member of the account already has this email (case-insensitively).
     */
    async insert(
      accountId: string,
      v: { email: string; role: TeamRole; permissions: StoredPermissions; invitedBy: string; inviteTokenHash: string; ttlMs: number },
      q: Queryable = db,
    ): Promise<TeamMemberRow | null> {
      try {
        const { rows } = await q.query<TeamMemberRow>(
          `INSERT INTO team_members (account_id, email, role, permissions, status, invited_by, invite_token_hash, expires_at)
           VALUES ($1, $2, $3, $4, 'invited', $5, $6, now() + $7::double precision * interval '1 millisecond')
           RETURNING ${COLUMNS}`,
          [accountId, v.email, v.role, JSON.stringify(v.permissions), v.invitedBy, v.inviteTokenHash, v.ttlMs],
        );
        return rows[0]!;
      } catch (err) {
        if (isEmailTaken(err)) return null;
        throw err;
      }
    },

    /** A current (invited or active) member; removed ones are history and not found here. */
    async findCurrent(accountId: string, id: string, q: Queryable = db): Promise<TeamMemberRow | null> {
      const { rows } = await q.query<TeamMemberRow>(
        `SELECT ${COLUMNS} FROM team_members WHERE id = $1 AND account_id = $2 AND status <> 'removed'`,
        [id, accountId],
      );
      return rows[0] ?? null;
    },

    async findCurrentForUpdate(accountId: string, id: string, q: Queryable): Promise<TeamMemberRow | null> {
      const { rows } = await q.query<TeamMemberRow>(
        `SELECT ${COLUMNS} FROM team_members WHERE id = $1 AND account_id = $2 AND status <> 'removed' FOR UPDATE`,
        [id, accountId],
      );
      return rows[0] ?? null;
    },

    /** `statuses`: the statuses listed (default listing: invited and active). */
    async list(accountId: string, statuses: MemberStatus[], page: PageRequest, q: Queryable = db): Promise<Page<TeamMemberRow>> {
      const k = keysetTail(page, 3);
      const { rows } = await q.query<TeamMemberRow & { page_created_at: string }>(
        `SELECT ${COLUMNS}, ${PAGE_KEY_COLUMNS} FROM team_members
         WHERE account_id = $1 AND status = ANY($2::text[]) ${k.where} ${k.tail}`,
        [accountId, statuses, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    async update(
      accountId: string,
      id: string,
      v: { role: TeamRole; permissions: StoredPermissions },
      q: Queryable = db,
    ): Promise<TeamMemberRow | null> {
      const { rows } = await q.query<TeamMemberRow>(
        `UPDATE team_members SET role = $3, permissions = $4, updated_at = now()
         WHERE id = $1 AND account_id = $2 AND status <> 'removed'
         RETURNING ${COLUMNS}`,
        [id, accountId, v.role, JSON.stringify(v.permissions)],
      );
      return rows[0] ?? null;
    },

    /**
     * Withdraws the account's expired invitation to `email` (any case), if there is one, so that the address
     * can be invited again: it becomes `removed`, kept as history like any withdrawn invitation.
     */
    async withdrawExpired(accountId: string, email: string, q: Queryable): Promise<void> {
      await q.query(
        `UPDATE team_members SET status = 'removed', removed_at = now(), updated_at = now()
         WHERE account_id = $1 AND lower(email) = lower($2) AND status = 'invited' AND expires_at <= now()`,
        [accountId, email],
      );
    },

    /** The pending (invited) invitations a user sent in the account, locked: a team write may withdraw them. */
    async pendingInvitationsBy(accountId: string, inviterUserId: string, q: Queryable): Promise<TeamMemberRow[]> {
      const { rows } = await q.query<TeamMemberRow>(
        `SELECT ${COLUMNS} FROM team_members WHERE account_id = $1 AND invited_by = $2 AND status = 'invited' FOR UPDATE`,
        [accountId, inviterUserId],
      );
      return rows;
    },

    /** Withdraws invitations (status `removed`, kept as history like any withdrawn invitation). */
    async withdrawInvitations(accountId: string, ids: string[], q: Queryable): Promise<void> {
      if (ids.length === 0) return;
      await q.query(
        `UPDATE team_members SET status = 'removed', removed_at = now(), updated_at = now()
         WHERE account_id = $1 AND id = ANY($2::uuid[]) AND status = 'invited'`,
        [accountId, ids],
      );
    },

    /** The account of the open (invited, not expired) invitation with this id, token and addressee; null otherwise. */
    async invitingAccount(userId: string, id: string, tokenHash: string, q: Queryable = db): Promise<string | null> {
      const { rows } = await q.query<{ account_id: string }>(
        `SELECT account_id FROM team_members
         WHERE id = $2 AND status = 'invited' AND expires_at > now() AND invite_token_hash = $3 AND ${ADDRESSED_TO}`,
        [userId, id, tokenHash],
      );
      return rows[0]?.account_id ?? null;
    },

    /**
     * What the user holds in the account now: `owner`, their active membership's role and overrides, or
     * null (no longer a member, or no user: an inviter whose user was deleted).
     */
    async currentHolding(
      accountId: string,
      userId: string | null,
      q: Queryable,
    ): Promise<'owner' | { role: TeamRole; permissions: StoredPermissions } | null> {
      if (userId === null) return null;
      const { rows } = await q.query<{ owner: boolean; role: TeamRole | null; permissions: StoredPermissions | null }>(
        `SELECT a.owner_user_id = $2 AS owner, m.role, m.permissions
         FROM accounts a LEFT JOIN team_members m ON m.account_id = a.id AND m.user_id = $2 AND m.status = 'active'
         WHERE a.id = $1`,
        [accountId, userId],
      );
      const row = rows[0];
      if (!row) return null;
      if (row.owner) return 'owner';
      return row.role === null ? null : { role: row.role, permissions: row.permissions ?? {} };
    },

    /** Marks the member removed (the row stays as history). False when absent or already removed. */
    async markRemoved(accountId: string, id: string, q: Queryable = db): Promise<boolean> {
      const { rowCount } = await q.query(
        `UPDATE team_members SET status = 'removed', removed_at = now(), updated_at = now()
         WHERE id = $1 AND account_id = $2 AND status <> 'removed'`,
        [id, accountId],
      );
      return rowCount === 1;
    },

    /**
     * Open (invited, not expired) invitations addressed to the user's email, across all accounts. Deliberately not filtered by
     * account: the addressee is not (yet) a member of the accounts that invited them.
     */
    async listInvitationsFor(userId: string, page: PageRequest, q: Queryable = db): Promise<Page<InvitationRow>> {
      const k = keysetTail(page, 2, 'tm');
      const { rows } = await q.query<InvitationRow & { page_created_at: string }>(
        `SELECT tm.id, tm.account_id, a.name AS account_name, tm.email, tm.role, tm.permissions, tm.invited_at, tm.expires_at,
           tm.created_at::text AS page_created_at
         FROM team_members tm JOIN accounts a ON a.id = tm.account_id
         WHERE tm.status = 'invited' AND tm.expires_at > now()
           AND lower(tm.email) = (SELECT lower(u.email) FROM users u WHERE u.id = $1)
         ${k.where} ${k.tail}`,
        [userId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    /**
     * Accepts an open (invited, not expired) invitation addressed to the user whose token hashes to
     * `tokenHash`. One conditional UPDATE, so of two concurrent accepts exactly one succeeds. Null when there
     * is no open invitation with this id, this token and this addressee.
     */
    async accept(userId: string, id: string, tokenHash: string, q: Queryable = db): Promise<TeamMemberRow | null> {
      const { rows } = await q.query<TeamMemberRow>(
        `UPDATE team_members SET status = 'active', user_id = $1, accepted_at = now(), updated_at = now()
         WHERE id = $2 AND status = 'invited' AND expires_at > now() AND invite_token_hash = $3 AND ${ADDRESSED_TO}
         RETURNING ${COLUMNS}`,
        [userId, id, tokenHash],
      );
      return rows[0] ?? null;
    },

    /**
     * The membership row with this id, this token and this addressee, whatever its status: its status, and
     * whether (and when) it expired as an invitation. Null when there is none.
     */
    async findWithToken(
      userId: string,
      id: string,
      tokenHash: string,
      q: Queryable = db,
    ): Promise<{ status: MemberStatus; expires_at: Date | null; expired: boolean } | null> {
      const { rows } = await q.query<{ status: MemberStatus; expires_at: Date | null; expired: boolean }>(
        `SELECT status, expires_at, coalesce(expires_at <= now(), true) AS expired
         FROM team_members WHERE id = $2 AND invite_token_hash = $3 AND ${ADDRESSED_TO}`,
        [userId, id, tokenHash],
      );
      return rows[0] ?? null;
    },
  };
}
export type TeamRepository = ReturnType<typeof createTeamRepository>;
