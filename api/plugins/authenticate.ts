import type { FastifyInstance } from 'fastify';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors';
import { ACCESS_RULES, refusal } from '../services/access';
import type { AuthService } from '../services/auth-service';

/** The request header that names the account a request acts in (absent: the caller's own). */
export const ACCOUNT_HEADER = 'account-id';

/**
 * The one place that decides who a request is and what it may do, for every route of the context it is
 * added to (except routes marked `config: { public: true }`), at onRequest, before the body is read:
 * 1. `Authorization: Bearer <access token | API key>` → the user (401 without a valid one);
 * 2. `Account-Id: <accountId>` → the account the request acts in, the caller's own when absent; only its
 *    owner and its active members may act there (404 to anyone else, as if it did not exist);
 * 3. the route's `config.access` rule against the caller's role and permissions there (403 naming the
 *    missing right, before anything is read or written).
 * Services then receive `request.caller`: `{ userId, accountId, role, permissions }`. Nothing is cached
 * beyond the request, so a removal or a downgrade takes effect on the member's next request. A request that
 * outlives that moment (a live run stream) asks `request.callerStillAllowed()` from time to time: the same
 * three steps again with the same credential, true while they still let it through as the same caller.
 *
 * Every authenticated route must declare its rule: one registered without `config.access` stops the app
 * at start-up, so no route can forget the check.
 */
export function requireAuthentication(app: FastifyInstance, auth: AuthService): void {
  app.decorateRequest('caller', null);
  app.decorateRequest('callerStillAllowed', null);
  app.addHook('onRoute', (route) => {
    if (route.config?.public) return;
    const access = route.config?.access;
    if (!access || !ACCESS_RULES.includes(access)) {
      throw new Error(`${[route.method].flat().join(',')} ${route.url}: an authenticated route needs config.access (one of ${ACCESS_RULES.join(', ')})`);
    }
  });
  app.addHook('onRequest', async (request) => {
    const { config } = request.routeOptions;
    if (config.public) return;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match) throw new UnauthorizedError('Missing credential: send Authorization: Bearer <access token or API key>');
    const header = request.headers[ACCOUNT_HEADER];
    const credential = match[1]!;
    const acting = Array.isArray(header) ? header.join(',') : header;
    const caller = await auth.authenticate(credential, acting);
    if (!caller) throw new UnauthorizedError('Invalid or expired credential');
    const refused = refusal(config.access!, caller);
    if (refused) throw new ForbiddenError(refused);
    request.caller = caller;
    request.callerStillAllowed = async () => {
      try {
        const again = await auth.authenticate(credential, acting);
        return again !== null && again.userId === caller.userId && again.accountId === caller.accountId && refusal(config.access!, again) === null;
      } catch (err) {
        if (err instanceof NotFoundError) return false; // no longer a member of the account
        throw err;
      }
    };
  });
}
