import { z } from 'zod';
import { emailAddress, timestamp } from './common';

export const registerBody = z
  .strictObject({ email: emailAddress, password: z.string().min(8).max(1024), name: z.string().trim().max(200).optional() })
  .meta({ id: 'RegisterRequest' });
// Login takes any string: an address that cannot be registered simply fails like a wrong password, and
// accounts registered before the length limits can still sign in.
export const loginBody = z.strictObject({ email: z.string().max(320), password: z.string().max(1024) }).meta({ id: 'LoginRequest' });
export const refreshBody = z
  .strictObject({
    refreshToken: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe('The refresh token. A request with X-Client: console may send {} instead: its ap_refresh cookie is read (without that header the cookie never is)'),
  })
  .meta({ id: 'RefreshRequest' });

/** The header that asks for the console's cookie mode (api/console-session.ts). */
export const consoleClientHeaders = z.object({
  'x-client': z
    .string()
    .optional()
    .describe(
      '`console`: the refresh token is set as the cookie ap_refresh (HttpOnly, SameSite=Strict, Path=/api/auth, Secure unless served over ' +
        'loopback http; over https the cookie __Host-ap_refresh, Secure, Path=/) and left out of the body; refresh and logout read that cookie when the body has no refreshToken. Any other value: ignored.',
    ),
});

export const userSchema = z
  .object({ id: z.uuid(), email: z.string(), name: z.string(), balance: z.int().min(0).describe('Units in your account; never below zero'), createdAt: timestamp })
  .meta({ id: 'User' });

export const tokenPairSchema = z
  .object({
    accessToken: z.string(),
    refreshToken: z.string().optional().describe('Absent for a request with X-Client: console: it is in the ap_refresh cookie instead'),
    expiresIn: z.int().describe('Access token lifetime in seconds'),
  })
  .meta({ id: 'TokenPair' });

export const sessionSchema = tokenPairSchema.extend({ user: userSchema }).meta({ id: 'Session' });

export const createApiKeyBody = z.strictObject({ name: z.string().trim().min(1).max(200) }).meta({ id: 'CreateApiKey' });

export const apiKeySchema = z
  .object({ id: z.uuid(), name: z.string(), prefix: z.string(), lastUsedAt: timestamp.nullable(), createdAt: timestamp })
  .meta({ id: 'ApiKey' });

export const createdApiKeySchema = apiKeySchema
  .extend({ key: z.string().describe('The key itself; shown only in this response') })
  .meta({ id: 'CreatedApiKey' });
