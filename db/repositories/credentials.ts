import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';
import type { StoredPermissions, TeamRole } from './team';

export interface RefreshTokenRow {
  id: string;
  user_id: string;
  family_id: string;
  expires_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
}

export interface ApiKeyRow {
  id: string;
  user_id: string;
  name: string;
  prefix: string;
  last_used_at: Date | null;
  created_at: Date;
}

/** An API key in use: whose it is, their own account, and their membership of the account acted in. */
export interface ApiKeyUse {
  user_id: string;
  own_account_id: string;
  membership: { role: TeamRole; permissions: StoredPermissions } | null;
}

/** Refresh tokens and API keys; both are stored as SHA-256 hashes only. */
export function createCredentialsRepository(db: Queryable) {
  return {
    async insertRefreshToken(
      input: { userId: string; familyId: string; tokenHash: string; expiresAt: Date },
      q: Queryable = db,
    ): Promise<void> {
      await q.query(
        `INSERT INTO refresh_tokens (user_id, family_id, token_hash, expires_at) VALUES ($1, $2, $3, $4)`,
        [input.userId, input.familyId, input.tokenHash, input.expiresAt],
      );
    },

    /**
     * Takes the lock of the token's family until the transaction ends and returns the family id (null
     * for an unknown token). Every rotation and revocation of a family holds it, so a revocation sees the
     * token a concurrent rotation inserts: a row lock cannot cover a row that does not exist yet.
     */
    async lockFamilyOfToken(tokenHash: string, q: Queryable): Promise<string | null> {
      const { rows } = await q.query<{ family_id: string }>(
        `SELECT family_id, pg_advisory_xact_lock(hashtext('refresh-family'), hashtext(family_id::text))
         FROM refresh_tokens WHERE token_hash = $1`,
        [tokenHash],
      );
      return rows[0]?.family_id ?? null;
    },

    /** Read it after lockFamilyOfToken: a statement that starts after the lock sees what its holder committed. */
    async findRefreshToken(tokenHash: string, q: Queryable): Promise<RefreshTokenRow | null> {
      const { rows } = await q.query<RefreshTokenRow>(
        `SELECT id, user_id, family_id, expires_at, rotated_at, revoked_at FROM refresh_tokens WHERE token_hash = $1`,
        [tokenHash],
      );
      return rows[0] ?? null;
    },

    async markRotated(id: string, q: Queryable): Promise<void> {
      await q.query(`UPDATE refresh_tokens SET rotated_at = now() WHERE id = $1`, [id]);
    },

    /** Call with the family's lock held (lockFamilyOfToken). */
    async revokeFamily(familyId: string, q: Queryable): Promise<void> {
      await q.query(`UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL`, [familyId]);
    },

    async insertApiKey(
      input: { userId: string; name: string; prefix: string; keyHash: string },
      q: Queryable = db,
    ): Promise<ApiKeyRow> {
      const { rows } = await q.query<ApiKeyRow>(
        `INSERT INTO api_keys (user_id, name, prefix, key_hash) VALUES ($1, $2, $3, $4)
         RETURNING id, user_id, name, prefix, last_used_at, created_at`,
        [input.userId, input.name, input.prefix, input.keyHash],
      );
      return rows[0]!;
    },

    /**
     * Finds a key by hash with its user's own account and, when `actingAccountId` is given, the user's
     * active membership of that account (null when none): the one query that authenticates a request
     * made with an API key. Stamps the key's use (at most once a minute, to keep reads cheap).
     */
    async useApiKey(keyHash: string, actingAccountId: string | null, q: Queryable = db): Promise<ApiKeyUse | null> {
      const { rows } = await q.query<{
        id: string;
        user_id: string;
        last_used_at: Date | null;
        own_account_id: string;
        member_role: TeamRole | null;
        member_permissions: StoredPermissions | null;
      }>(
        `SELECT k.id, k.user_id, k.last_used_at, a.id AS own_account_id, m.role AS member_role, m.permissions AS member_permissions
         FROM api_keys k
         JOIN accounts a ON a.owner_user_id = k.user_id
         LEFT JOIN team_members m ON m.account_id = $2::uuid AND m.user_id = k.user_id AND m.status = 'active'
         WHERE k.key_hash = $1`,
        [keyHash, actingAccountId],
      );
      const key = rows[0];
      if (!key) return null;
      if (!key.last_used_at || Date.now() - key.last_used_at.getTime() > 60_000) {
        await q.query(`UPDATE api_keys SET last_used_at = now() WHERE id = $1`, [key.id]);
      }
      return {
        user_id: key.user_id,
        own_account_id: key.own_account_id,
        membership: key.member_role ? { role: key.member_role, permissions: key.member_permissions ?? {} } : null,
      };
    },

    async listApiKeys(userId: string, page: PageRequest, q: Queryable = db): Promise<Page<ApiKeyRow>> {
      const k = keysetTail(page, 2);
      const { rows } = await q.query<ApiKeyRow & { page_created_at: string }>(
        `SELECT id, user_id, name, prefix, last_used_at, created_at, ${PAGE_KEY_COLUMNS}
         FROM api_keys WHERE user_id = $1 ${k.where} ${k.tail}`,
        [userId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    async deleteApiKey(userId: string, id: string, q: Queryable = db): Promise<boolean> {
      const { rowCount } = await q.query(`DELETE FROM api_keys WHERE id = $1 AND user_id = $2`, [id, userId]);
      return rowCount === 1;
    },
  };
}
export type CredentialsRepository = ReturnType<typeof createCredentialsRepository>;
