import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import type { AuthRateLimits } from '../plugins/auth-rate-limit';
import { answerForConsole, clearRefreshCookie, isConsoleRequest, refreshCookieOf } from '../console-session';
import { UnauthorizedError } from '../errors';
import { apiKeySchema, consoleClientHeaders, createApiKeyBody, createdApiKeySchema, loginBody, refreshBody, registerBody, sessionSchema, tokenPairSchema, userSchema } from '../schemas/auth';
import { errorResponse, idParams, listQuery, noContent } from '../schemas/common';
import type { AuthService } from '../services/auth-service';
import { callerOf, type App } from '../types';

export function authRoutes(app: App, deps: { auth: AuthService; rateLimit: AuthRateLimits; publicBaseUrl: string; refreshTokenTtlSeconds: number }): void {
  const { auth } = deps;
  const NO_TOKEN = 'No refresh token: send refreshToken, or X-Client: console with the ap_refresh cookie';
  const CONSOLE = ' With X-Client: console the refresh token is set as the cookie ap_refresh instead of returned in the body.';
  /**
   * The refresh token of a refresh or logout: the body's, or for a console request its cookie's. A cookie
   * without the header is never read (docs/console.md § Auth: CSRF); no token at all is a 401 for refresh
   * and nothing to revoke for logout.
   */
  const presentedToken = (request: FastifyRequest, body: { refreshToken?: string }): string | undefined =>
    body.refreshToken ?? (isConsoleRequest(request) ? refreshCookieOf(request) : undefined);

  const open = { public: true, rateLimit: deps.rateLimit.perClient };
  const tags = ['auth'];
  const LIMIT = 'AUTH_RATE_LIMIT_MAX requests (default 10) per client address per AUTH_RATE_LIMIT_WINDOW_MS (15 min), shared by register, login, refresh and logout';
  const limited = errorResponse(`More than ${LIMIT}; see Retry-After.`);

  app.post(
    '/api/auth/register',
    {
      config: open,
      schema: {
        tags,
        summary: 'Register',
        description:
          'Creates a user and their account (granted INITIAL_BALANCE units) and signs them in: an access token (JWT, 15 min) and a ' +
          `refresh token. Passwords have at least 8 characters; emails are unique whatever their case. No credential; ${LIMIT}.${CONSOLE}`,
        headers: consoleClientHeaders,
        body: registerBody,
        response: { 201: sessionSchema, 409: errorResponse('An account with this email (in any case) already exists.'), 429: limited },
      },
    },
    async (request, reply) => reply.code(201).send(answerForConsole(request, reply, await auth.register(request.body), deps.refreshTokenTtlSeconds)),
  );

  app.post(
    '/api/auth/login',
    {
      config: open,
      ...deps.rateLimit.loginPerEmail,
      schema: {
        tags,
        summary: 'Sign in',
        description:
          'Exchanges an email and password for an access token and a refresh token. A wrong email and a wrong password answer ' +
          `the same 401. No credential; ${LIMIT}, and AUTH_RATE_LIMIT_MAX failed attempts per email per window whatever the address.${CONSOLE}`,
        headers: consoleClientHeaders,
        body: loginBody,
        response: {
          200: sessionSchema,
          401: errorResponse('Invalid email or password.'),
          429: errorResponse(`More than ${LIMIT}, or too many failed attempts for this email; see Retry-After.`),
        },
      },
    },
    async (request, reply) => answerForConsole(request, reply, await auth.login(request.body), deps.refreshTokenTtlSeconds),
  );

  app.post(
    '/api/auth/refresh',
    {
      config: open,
      schema: {
        tags,
        summary: 'Refresh the tokens',
        description:
          'Exchanges a refresh token for a new access token and a new refresh token; the old one is spent. Presenting a spent ' +
          `refresh token again revokes its whole family (every token of that sign-in): it may have leaked. No credential; ${LIMIT}.${CONSOLE} ` +
          'Such a request may send {} and have the cookie read; a 401 then also clears the cookie.',
        headers: consoleClientHeaders,
        body: refreshBody,
        response: {
          200: tokenPairSchema,
          401: errorResponse(
            'The refresh token is unknown, expired or revoked, or was already used (its family is then revoked); or none was presented (no ' +
              'refreshToken, and no X-Client: console with the ap_refresh cookie).',
          ),
          429: limited,
        },
      },
    },
    async (request, reply) => {
      const token = presentedToken(request, request.body);
      try {
        if (token === undefined) throw new UnauthorizedError(NO_TOKEN);
        return answerForConsole(request, reply, await auth.refresh(token), deps.refreshTokenTtlSeconds);
      } catch (err) {
        // A console whose cookie is spent keeps no dead cookie.
        if (err instanceof UnauthorizedError && isConsoleRequest(request)) clearRefreshCookie(request, reply);
        throw err;
      }
    },
  );

  app.post(
    '/api/auth/logout',
    {
      config: open,
      schema: {
        tags,
        summary: 'Sign out',
        description:
          `Revokes the refresh token's family (204 whether or not it was valid); access tokens expire on their own. No credential; ${LIMIT}. ` +
          'With X-Client: console the token may come from the ap_refresh cookie (send {}), and the cookie is cleared. With no token at all, nothing is revoked.',
        headers: consoleClientHeaders,
        body: refreshBody,
        response: { 204: noContent, 429: limited },
      },
    },
    async (request, reply) => {
      const token = presentedToken(request, request.body);
      if (token !== undefined) await auth.logout(token);
      if (isConsoleRequest(request)) clearRefreshCookie(request, reply);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/auth/me',
    { config: { access: 'self' }, schema: { tags, summary: 'Who am I', description: 'The calling user, with the balance of their account.', response: { 200: userSchema } } },
    async (request) => auth.me(callerOf(request)),
  );

  app.post(
    '/api/auth/api-keys',
    {
      config: { access: 'self' },
      schema: {
        tags,
        summary: 'Create an API key',
        description: 'A long-lived credential (apk_…) for scripts, used like an access token. The key is shown in this response only; the API stores its SHA-256.',
        body: createApiKeyBody,
        response: { 201: createdApiKeySchema },
      },
    },
    async (request, reply) => reply.code(201).send(await auth.createApiKey(callerOf(request), request.body.name)),
  );

  app.get(
    '/api/auth/api-keys',
    {
      config: { access: 'self' },
      schema: {
        tags,
        summary: 'List API keys',
        description: 'Your API keys, newest first, with their prefix and last use; never the key itself.',
        querystring: listQuery,
        response: { 200: z.array(apiKeySchema) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await auth.listApiKeys(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.delete(
    '/api/auth/api-keys/:id',
    {
      config: { access: 'self' },
      schema: {
        tags,
        summary: 'Revoke an API key',
        description: 'The key stops working at once (204).',
        params: idParams,
        response: { 204: noContent },
      },
    },
    async (request, reply) => {
      await auth.deleteApiKey(callerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
