import type { FastifyInstance } from 'fastify';
import { withCheckedTargets } from '../../lib/network';

/**
 * Runs a route's `config.preflight` (checks that may wait on the network: a URL's lookup) after its body
 * is validated and before the request's write unit takes a pooled connection (an Idempotency-Key's
 * transaction begins in the next preHandler): a request waiting on DNS holds no connection another
 * account needs. The handler then runs with the record of what was checked (lib/network.ts
 * withCheckedTargets), so the service it calls does not look the same names up again.
 * Register it before supportIdempotencyKeys: hooks run in the order they were added.
 */
export function runPreflights(app: FastifyInstance): void {
  // Callback style, so that the rest of the request (the idempotency hook, the handler) runs inside the record.
  app.addHook('preHandler', (request, _reply, done) => {
    const preflight = request.routeOptions.config.preflight;
    if (!preflight) return done();
    withCheckedTargets(() => {
      preflight(request).then(
        () => done(),
        (err: Error) => done(err),
      );
    });
  });
}
