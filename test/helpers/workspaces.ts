import assert from 'node:assert/strict';
import { registerUser, type TestApp, type TestUser } from './app';

export type Role = 'admin' | 'editor' | 'viewer';
export type CustomPermissions = Partial<Record<'canExport' | 'canDelete' | 'canManageTeam', boolean>>;

/** A member of a workspace: their user, their membership's id, and headers that act in the workspace. */
export interface Member {
  user: TestUser;
  memberId: string;
  /** Authorization plus `Account-Id: <the workspace>`. */
  headers: Record<string, string>;
}

/** The id of the account a user owns. */
export async function accountIdOf(app: TestApp, user: TestUser): Promise<string> {
  const res = await app.inject({ method: 'GET', url: '/api/account', headers: user.auth });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().id;
}

/** Headers that make `user` act in `accountId`. */
export const actingIn = (user: TestUser, accountId: string) => ({ ...user.auth, 'account-id': accountId });

/**
 * A new user invited into the workspace of `owner` with `role` (and custom permissions), who accepts with
 * the invitation's token: an active member. `inviter` invites (default: the owner, acting in their own account).
 */
export async function joinWorkspace(
  app: TestApp,
  owner: TestUser,
  role: Role,
  permissions?: CustomPermissions,
  inviter: Record<string, string> = owner.auth,
): Promise<Member> {
  const user = await registerUser(app);
  const invited = await app.inject({ method: 'POST', url: '/api/team', headers: inviter, payload: { email: user.email, role, permissions } });
  assert.equal(invited.statusCode, 201, invited.body);
  const { id, inviteToken, accountId } = invited.json();
  const accepted = await app.inject({ method: 'POST', url: `/api/invitations/${id}/accept`, headers: user.auth, payload: { token: inviteToken } });
  assert.equal(accepted.statusCode, 200, accepted.body);
  return { user, memberId: id, headers: actingIn(user, accountId) };
}
