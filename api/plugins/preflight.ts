import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestGuardsRepository } from '../../db/repositories/request-guards';
import { withCheckedTargets } from '../../lib/network';
import { IDEMPOTENCY_TTL_HOURS, idempotencyKeyOf } from './idempotency';

/**
 * Runs a route's `config.preflight` (checks that may wait on the network: a URL's lookup) after its body
 * is validated and before the request's write unit takes a pooled connection (an Idempotency-Key's
 * transaction begins in the next preHandler): a request waiting on DNS holds no connection another
 * account needs. The handler then runs with the record of what was checked (lib/network.ts
 * withCheckedTargets), so the service it calls does not look the same names up again.
 * Register it before supportIdempotencyKeys: hooks run in the order they were added.
 *
 * A repeat of a request whose answer is stored for its Idempotency-Key skips the preflight: it is answered
 * from the record (replayed, or 422 for another body), never held up by lookups, nor refused by a name that
 * stopped resolving since. A refusal by the preflight is not stored, like any validation error.
 */
export function runPreflights(app: FastifyInstance, deps: { guards: RequestGuardsRepository }): void {
  async function preflightOf(request: FastifyRequest) {
    const preflight = request.routeOptions.config.preflight;
    if (!preflight) return null;
    const key = idempotencyKeyOf(request);
    if (key !== undefined && (await deps.guards.hasStoredIdempotencyResponse(request.caller!.userId, key, IDEMPOTENCY_TTL_HOURS))) return null;
    return preflight;
  }

  // Callback style, so that the rest of the request (the idempotency hook, the handler) runs inside the record.
  app.addHook('preHandler', (request, _reply, done) => {
    if (!request.routeOptions.config.preflight) return done();
    withCheckedTargets(() => {
      preflightOf(request)
        .then((preflight) => preflight?.(request))
        .then(
          () => done(),
          (err: Error) => done(err),
        );
    });
  });
}
