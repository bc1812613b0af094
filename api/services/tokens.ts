import { createHash, randomBytes } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';

export interface AccessClaims {
  sub: string; // user id
  acc: string; // account id
}

/**
 * Who issues access tokens and whom they are for. Verification requires both, so a token signed with
 * the same secret for another purpose or service (a shared JWT_SECRET, a future token type) is refused.
 */
export const ACCESS_TOKEN_ISSUER = 'agent-platform';
export const ACCESS_TOKEN_AUDIENCE = 'agent-platform-api';

/** Access tokens are short-lived HS256 JWTs; refresh tokens and API keys are opaque random strings. */
export function createTokenService(opts: { jwtSecret: string; accessTokenTtlSeconds: number }) {
  const sign = createSigner({
    key: opts.jwtSecret,
    algorithm: 'HS256',
    expiresIn: opts.accessTokenTtlSeconds * 1000,
    iss: ACCESS_TOKEN_ISSUER,
    aud: ACCESS_TOKEN_AUDIENCE,
  });
  const verify = createVerifier({
    key: opts.jwtSecret,
    algorithms: ['HS256'],
    allowedIss: ACCESS_TOKEN_ISSUER,
    allowedAud: ACCESS_TOKEN_AUDIENCE,
    requiredClaims: ['iss', 'aud', 'exp'],
    cache: 1000,
  });
  return {
    accessTokenTtlSeconds: opts.accessTokenTtlSeconds,
    signAccessToken(claims: AccessClaims): string {
      return sign({ ...claims, typ: 'access' });
    },
    /** Returns null for anything that is not a valid, unexpired access token of ours. */
    verifyAccessToken(token: string): AccessClaims | null {
      try {
        const payload = verify(token) as Partial<AccessClaims> & { typ?: string };
        if (payload.typ !== 'access' || typeof payload.sub !== 'string' || typeof payload.acc !== 'string') return null;
        return { sub: payload.sub, acc: payload.acc };
      } catch {
        return null;
      }
    },
  };
}
export type TokenService = ReturnType<typeof createTokenService>;

export const API_KEY_PREFIX = 'apk_';
export const REFRESH_TOKEN_PREFIX = 'rt_';

export function randomToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
