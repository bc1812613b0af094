import type { FastifyInstance, FastifyRequest } from 'fastify';
import { TooManyRequestsError } from '../errors';
import { createFairTurns, type FairTurns } from '../../lib/fair-turns';

/** Seconds an account over its share is asked to wait. */
const RETRY_AFTER_SECONDS = 1;
const releases = new WeakMap<FastifyRequest, () => void>();

/**
 * Each account's share of this API process (docs/architecture.md § Limits and fairness): an authenticated
 * request takes a turn once its caller is known and gives it back once answered. An account holds at most
 * `perAccount` turns (the next → 429 with Retry-After at once, before any work); at `perProcess` in all, a request
 * of an account with none in flight is taken at once and the others wait for freed turns, served account by
 * account, for at most `waitMs` (then 429). So one account's requests cannot fill the pool's queue or the event
 * loop ahead of another's. Registered after the authentication hook, in the same context.
 */
export function shareRequestTurns(app: FastifyInstance, limits: { perAccount: number; perProcess: number; waitMs: number }): FairTurns {
  const turns = createFairTurns(limits);
  app.addHook('onRequest', async (request, reply) => {
    const accountId = request.caller?.accountId;
    if (!accountId) return;
    // A client that goes away while waiting leaves the line (the response closes with its connection).
    const gone = new AbortController();
    const onClose = () => gone.abort();
    reply.raw.once('close', onClose);
    const turn = await turns.take(accountId, gone.signal);
    reply.raw.off('close', onClose);
    if ('refused' in turn) {
      throw new TooManyRequestsError(
        turn.refused === 'account'
          ? `this account has ${limits.perAccount} requests in progress in this API process, the most it may (REQUESTS_IN_FLIGHT_PER_ACCOUNT); try again in ${RETRY_AFTER_SECONDS} s`
          : `this API process is serving as many requests as it may (REQUESTS_IN_FLIGHT_PER_PROCESS) and this account already has some in progress; try again in ${RETRY_AFTER_SECONDS} s`,
        RETRY_AFTER_SECONDS,
      );
    }
    releases.set(request, turn.release);
  });
  const release = (request: FastifyRequest, _reply: unknown, done: () => void) => {
    endTurn(request);
    done();
  };
  app.addHook('onResponse', release);
  app.addHook('onRequestAbort', (request, done) => {
    endTurn(request);
    done();
  });
  return turns;
}

/**
 * Gives the request's turn back before it is answered in full: a route that hijacks its reply to hold it open
 * (a live run stream) calls this once it is open, since its own limits bound what it holds from then on.
 */
export function endTurn(request: FastifyRequest): void {
  const release = releases.get(request);
  releases.delete(request);
  release?.();
}
