import { randomUUID } from 'node:crypto';
import { withTransaction, type Db, type Queryable } from '../../db/pool';
import type { AccountsRepository } from '../../db/repositories/accounts';
import type { CredentialsRepository } from '../../db/repositories/credentials';
import type { UserRow, UsersRepository } from '../../db/repositories/users';
import type { PageRequest } from '../../db/paging';
import { ConflictError, NotFoundError, UnauthorizedError } from '../errors';
import { toApiKey, toUser } from '../mappers';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from './passwords';
import { API_KEY_PREFIX, randomToken, REFRESH_TOKEN_PREFIX, sha256, type TokenService } from './tokens';

/** Who is calling: the user and the account their resources belong to. */
export interface Caller {
  userId: string;
  accountId: string;
}

const INVALID_REFRESH = 'Refresh token is invalid or expired';

export function createAuthService(deps: {
  db: Db;
  users: UsersRepository;
  accounts: AccountsRepository;
  credentials: CredentialsRepository;
  tokens: TokenService;
  initialBalance: number;
  refreshTokenTtlDays: number;
}) {
  const { db, users, accounts, credentials, tokens } = deps;

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
          await accounts.applyLedgerEntry({ accountId: account.id, amount: deps.initialBalance, reason: 'initial_grant' }, tx);
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

    async me(caller: Caller) {
      const user = await users.findById(caller.userId);
      const account = await accounts.findById(caller.accountId);
      if (!user || !account) throw new UnauthorizedError();
      return toUser(user, account.balance);
    },

    /** Resolves a bearer credential (access token or API key) to its caller, or null. */
    async authenticate(credential: string): Promise<Caller | null> {
      if (credential.startsWith(API_KEY_PREFIX)) {
        const key = await credentials.useApiKey(sha256(credential));
        if (!key) return null;
        const account = await accounts.findByOwner(key.user_id);
        return account ? { userId: key.user_id, accountId: account.id } : null;
      }
      const claims = tokens.verifyAccessToken(credential);
      return claims ? { userId: claims.sub, accountId: claims.acc } : null;
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
