import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import type { AuthRateLimits } from '../plugins/auth-rate-limit';
import { apiKeySchema, createApiKeyBody, createdApiKeySchema, loginBody, refreshBody, registerBody, sessionSchema, tokenPairSchema, userSchema } from '../schemas/auth';
import { authErrors, errorSchema, idParams, listQuery, noContent } from '../schemas/common';
import type { AuthService } from '../services/auth-service';
import { callerOf, type App } from '../types';

export function authRoutes(app: App, deps: { auth: AuthService; rateLimit: AuthRateLimits; publicBaseUrl: string }): void {
  const { auth } = deps;
  const open = { public: true, rateLimit: deps.rateLimit.perClient };
  const tags = ['auth'];
  const limited = { 400: errorSchema, 429: errorSchema };

  app.post(
    '/api/auth/register',
    { config: open, schema: { tags, security: [], body: registerBody, response: { 201: sessionSchema, 409: errorSchema, ...limited } } },
    async (request, reply) => reply.code(201).send(await auth.register(request.body)),
  );

  app.post(
    '/api/auth/login',
    { config: open, ...deps.rateLimit.loginPerEmail, schema: { tags, security: [], body: loginBody, response: { 200: sessionSchema, 401: errorSchema, ...limited } } },
    async (request) => auth.login(request.body),
  );

  app.post(
    '/api/auth/refresh',
    { config: open, schema: { tags, security: [], body: refreshBody, response: { 200: tokenPairSchema, 401: errorSchema, ...limited } } },
    async (request) => auth.refresh(request.body.refreshToken),
  );

  app.post(
    '/api/auth/logout',
    { config: open, schema: { tags, security: [], body: refreshBody, response: { 204: noContent, ...limited } } },
    async (request, reply) => {
      await auth.logout(request.body.refreshToken);
      return reply.code(204).send();
    },
  );

  app.get('/api/auth/me', { schema: { tags, response: { 200: userSchema, ...authErrors } } }, async (request) => auth.me(callerOf(request)));

  app.post(
    '/api/auth/api-keys',
    { schema: { tags, body: createApiKeyBody, response: { 201: createdApiKeySchema, 400: errorSchema, ...authErrors } } },
    async (request, reply) => reply.code(201).send(await auth.createApiKey(callerOf(request), request.body.name)),
  );

  app.get(
    '/api/auth/api-keys',
    { schema: { tags, querystring: listQuery, response: { 200: z.array(apiKeySchema), 400: errorSchema, ...authErrors } } },
    async (request, reply) =>
      sendPage(request, reply, await auth.listApiKeys(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.delete(
    '/api/auth/api-keys/:id',
    { schema: { tags, params: idParams, response: { 204: noContent, 404: errorSchema, ...authErrors } } },
    async (request, reply) => {
      await auth.deleteApiKey(callerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
