import type { FastifyInstance } from 'fastify';
import { UnauthorizedError } from '../errors';
import type { AuthService } from '../services/auth-service';

/**
 * Requires `Authorization: Bearer <access token | API key>` on every route of the context it is added
 * to, except routes marked `config: { public: true }`. Runs at onRequest, before the body is read.
 */
export function requireAuthentication(app: FastifyInstance, auth: AuthService): void {
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public) return;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match) throw new UnauthorizedError('Missing credential: send Authorization: Bearer <access token or API key>');
    const caller = await auth.authenticate(match[1]!);
    if (!caller) throw new UnauthorizedError('Invalid or expired credential');
    request.caller = caller;
  });
}
