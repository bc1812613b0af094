import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { withTransaction, type Db, type Queryable } from '../../db/pool';
import type { AccountsRepository } from '../../db/repositories/accounts';
import type { CredentialsRepository } from '../../db/repositories/credentials';
import type { TeamRepository } from '../../db/repositories/team';
import type { UserRow, UsersRepository } from '../../db/repositories/users';
import type { PageRequest } from '../../db/paging';
import type { StoredPermissions, TeamRole } from '../../db/repositories/team';
import { ConflictError, NotFoundError, UnauthorizedError } from '../errors';
import { toApiKey, toUser } from '../mappers';
import { memberCaller, ownerCaller, type Caller } from './access';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from './passwords';
import { API_KEY_PREFIX, randomToken, REFRESH_TOKEN_PREFIX, sha256, type TokenService } from './tokens';

export type { Caller } from './access';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const INVALID_REFRESH = 'Refresh token is invalid or expired';

export function createAuthService(deps: {
  db: Db;
  users: UsersRepository;
  accounts: AccountsRepository;
  credentials: CredentialsRepository;
  team: TeamRepository;
  tokens: TokenService;
  initialBalance: number;
  refreshTokenTtlDays: number;
}) {
  const { db, users, accounts, credentials, team, tokens } = deps;

  /**
   * Membership lookups of the requests that arrive together, made as one query (DataLoader): under load
   * a request acting in another account then costs a fraction of a round trip, not a whole one. Nothing is
   * kept: a lookup is queued by its own request and made after it arrived (cache off), so a removal
   * committed before a request is always seen by it.
   */
  const memberships = new DataLoader<{ accountId: string; userId: string }, { role: TeamRole; permissions: StoredPermissions } | null, string>(
    async (pairs) => {
      const found = new Map((await team.findActiveMemberships(pairs)).map((m) => [`${m.account_id}/${m.user_id}`, m]));
      return pairs.map((p) => found.get(`${p.accountId}/${p.userId}`) ?? null);
    },
    // One batch per turn of the event loop: the requests read in one poll phase share a query.
    { cache: false, maxBatchSize: 500, batchScheduleFn: (flush) => setImmediate(flush) },
  );

  /**
   * The caller acting in `requested` (the Account-Id header; absent: their own account). Anyone but its
   * owner and its active members gets 404, as for an account that does not exist (so is a malformed id).
   * `membership` is the caller's active membership of `requested` when already known (an API key's
   * lookup joins it); undefined means "look it up".
   */
  async function actingCaller(
    userId: string,
    ownAccountId: string,
    requested: string | undefined,
    membership?: { role: TeamRole; permissions: StoredPermissions } | null,
  ): Promise<Caller> {
    if (requested === undefined || requested === ownAccountId) return ownerCaller(userId, ownAccountId);
    if (!UUID.test(requested)) throw new NotFoundError('Account');
    const member = membership === undefined ? await memberships.load({ accountId: requested, userId }) : membership;
    if (!member) throw new NotFoundError('Account');
    return memberCaller(userId, requested, member.role, member.permissions);
  }

  async function issueTokens(user: UserRow, accountId: string, familyId: string, q: Queryable) {
    const refreshToken = randomToken(REFRESH_TOKEN_PREFIX);
    await credentials.insertRefreshToken(
      {
        userId: user.id,
        familyId,
        tokenHash: sha256(refreshToken),
        expiresAt: new Date(Date.now() + deps.refreshTokenTtlDays * 86_400_000),
      },
      q,
    );
    return {
      accessToken: tokens.signAccessToken({ sub: user.id, acc: accountId }),
      refreshToken,
      expiresIn: tokens.accessTokenTtlSeconds,
    };
  }

  async function session(user: UserRow, q: Queryable = db) {
    const account = await accounts.findByOwner(user.id, q);
    if (!account) throw new UnauthorizedError('Account not found');
    return { user: toUser(user, account.balance), ...(await issueTokens(user, account.id, randomUUID(), q)) };
  }

  return {
    async register(input: { email: string; password: string; name?: string }) {
      const passwordHash = await hashPassword(input.password);
      return withTransaction(db, async (tx) => {
        const user = await users.insert({ email: input.email, name: input.name ?? '', passwordHash }, tx);
        if (!user) throw new ConflictError('An account with this email already exists');
        const account = await accounts.insert({ ownerUserId: user.id, name: user.name || user.email }, tx);
        if (deps.initialBalance > 0) {
          await accounts.applyLedgerEntry({ accountId: account.id, amount: deps.initialBalance, reason: 'initial_grant', actorUserId: null }, tx);
        }
        return session(user, tx);
      });
    },

    async login(input: { email: string; password: string }) {
      const user = await users.findByEmail(input.email);
      const ok = await verifyPassword(input.password, user?.password_hash ?? DUMMY_PASSWORD_HASH);
      if (!user || !ok) throw new UnauthorizedError('Invalid email or password');
      return session(user);
    },

    /**
     * Rotates a refresh token. Presenting a token that was already rotated means it leaked:
     * the whole family is revoked (committed) and the caller gets 401. Rotation and revocation hold the
     * family's lock, so neither can miss the other's tokens.
     */
    async refresh(refreshToken: string) {
      const tokenHash = sha256(refreshToken);
      const outcome = await withTransaction(db, async (tx) => {
        if (!(await credentials.lockFamilyOfToken(tokenHash, tx))) return { kind: 'invalid' as const };
        const row = await credentials.findRefreshToken(tokenHash, tx);
        if (!row || row.revoked_at || row.expires_at.getTime() <= Date.now()) return { kind: 'invalid' as const };
        if (row.rotated_at) {
          await credentials.revokeFamily(row.family_id, tx);
          return { kind: 'reused' as const };
        }
        await credentials.markRotated(row.id, tx);
        const user = await users.findById(row.user_id, tx);
        const account = user && (await accounts.findByOwner(user.id, tx));
        if (!user || !account) return { kind: 'invalid' as const };
        return { kind: 'ok' as const, tokens: await issueTokens(user, account.id, row.family_id, tx) };
      });
      if (outcome.kind === 'reused') throw new UnauthorizedError('Refresh token was already used; all sessions of this login were revoked');
      if (outcome.kind === 'invalid') throw new UnauthorizedError(INVALID_REFRESH);
      return outcome.tokens;
    },

    async logout(refreshToken: string): Promise<void> {
      await withTransaction(db, async (tx) => {
        const familyId = await credentials.lockFamilyOfToken(sha256(refreshToken), tx);
        if (familyId) await credentials.revokeFamily(familyId, tx);
      });
    },

    /** The user with the balance of the account they own (whichever account the request acts in). */
    async me(caller: Caller) {
      const user = await users.findById(caller.userId);
      const account = await accounts.findByOwner(caller.userId);
      if (!user || !account) throw new UnauthorizedError();
      return toUser(user, account.balance);
    },

    /**
     * Resolves a bearer credential (access token or API key) to its caller acting in `actingAccountId`
     * (the Account-Id header; absent: the caller's own account). Null for an invalid credential; 404 for
     * an account the caller may not act in. At most one query: none for an access token acting in its
     * own account, the membership for one acting elsewhere, and for an API key one that finds the key,
     * its user's account and the membership together.
     */
    async authenticate(credential: string, actingAccountId?: string): Promise<Caller | null> {
      if (credential.startsWith(API_KEY_PREFIX)) {
        const requested = actingAccountId !== undefined && UUID.test(actingAccountId) ? actingAccountId : null;
        const key = await credentials.useApiKey(sha256(credential), requested);
        if (!key) return null;
        return actingCaller(key.user_id, key.own_account_id, actingAccountId, key.membership);
      }
      const claims = tokens.verifyAccessToken(credential);
      return claims ? actingCaller(claims.sub, claims.acc, actingAccountId) : null;
    },

    async createApiKey(caller: Caller, name: string) {
      const key = randomToken(API_KEY_PREFIX);
      const row = await credentials.insertApiKey({ userId: caller.userId, name, prefix: key.slice(0, 12), keyHash: sha256(key) });
      return { ...toApiKey(row), key };
    },

    async listApiKeys(caller: Caller, page: PageRequest) {
      const result = await credentials.listApiKeys(caller.userId, page);
      return { ...result, items: result.items.map(toApiKey) };
    },

    async deleteApiKey(caller: Caller, id: string): Promise<void> {
      if (!(await credentials.deleteApiKey(caller.userId, id))) throw new NotFoundError('API key');
    },
  };
}
export type AuthService = ReturnType<typeof createAuthService>;
