import rateLimit, { type FastifyRateLimitStore, type RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestGuardsRepository } from '../../db/repositories/request-guards';
import { rateLimitSubject } from '../client-address';
import { AppError } from '../errors';
import { sha256 } from '../services/tokens';

export interface AuthRateLimits {
  /** For `config.rateLimit` of every unauthenticated auth route: one budget per client address. */
  perClient: RateLimitOptions;
  /** Route hooks for login: one budget of failed attempts per email. */
  loginPerEmail: {
    preHandler: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    onSend: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown>;
  };
  /**
   * Route hook for refresh: a refresh that succeeds gives its slot of the client address's budget back. Only a
   * live refresh token (256 bits, rotated at every use) succeeds, so nothing is guessed through it, and a person
   * whose console refreshes at every page load is never locked out by their own reloads.
   */
  refreshRefund: { onSend: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown> };
}

const retryAfterSeconds = (ttlMs: number) => Math.max(1, Math.ceil(ttlMs / 1000));

/**
 * The auth endpoints' budgets, counted in Postgres so that every API instance shares them (docs/api.md § Rate limits):
 * - per client address (an IPv6 client by its /64): every request to register, login, refresh, logout, a
 *   successful refresh giving its slot back;
 * - per email: failed logins. An attempt takes a slot before the password is checked (so a refused
 *   attempt costs no scrypt, and concurrent guesses cannot overrun the budget) and a successful login
 *   gives it back. Counting successes would add nothing against guessing, whose every try but the last
 *   fails, and would lock out a user who just logs in often.
 */
export async function registerAuthRateLimit(
  app: FastifyInstance,
  opts: { guards: RequestGuardsRepository; max: number; windowMs: number },
): Promise<AuthRateLimits> {
  const { guards, max, windowMs } = opts;

  class PostgresStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow?: number): void {
      guards.hitRateLimit(key, timeWindow ?? windowMs).then(
        ({ hits, ttlMs }) => callback(null, { current: hits, ttl: ttlMs }),
        (err: Error) => callback(err),
      );
    }
    child(): FastifyRateLimitStore {
      return this;
    }
  }

  await app.register(rateLimit, {
    global: false,
    store: PostgresStore as never,
    enableDraftSpec: true,
    skipOnError: false,
  });

  // Hashed: the table need not hold the addresses of people who merely tried. Case-insensitive, as logins are.
  const emailKey = (request: FastifyRequest) => `login-email:${sha256((request.body as { email: string }).email.toLowerCase())}`;
  const clientKey = (request: FastifyRequest) => `auth:${rateLimitSubject(request.ip)}`;

  return {
    perClient: {
      max,
      timeWindow: windowMs,
      keyGenerator: clientKey,
      errorResponseBuilder: (_request, context) =>
        new AppError(429, `Too many authentication requests; retry in ${retryAfterSeconds(context.ttl)} seconds`),
    },
    loginPerEmail: {
      async preHandler(request, reply) {
        const { hits, ttlMs } = await guards.hitRateLimit(emailKey(request), windowMs);
        if (hits <= max) return;
        const seconds = retryAfterSeconds(ttlMs);
        reply.headers({ 'retry-after': seconds, 'ratelimit-limit': max, 'ratelimit-remaining': 0, 'ratelimit-reset': seconds });
        throw new AppError(429, `Too many failed logins for this email; retry in ${seconds} seconds`);
      },
      async onSend(request, reply, payload) {
        if (reply.statusCode === 200) {
          // Losing the refund only costs the user one slot of their window: never fail a login for it.
          await guards.refundRateLimit(emailKey(request)).catch((err: unknown) => request.log.warn({ err }, 'login refund failed'));
        }
        return payload;
      },
    },
    refreshRefund: {
      async onSend(request, reply, payload) {
        if (reply.statusCode === 200) {
          await guards.refundRateLimit(clientKey(request)).catch((err: unknown) => request.log.warn({ err }, 'refresh refund failed'));
        }
        return payload;
      },
    },
  };
}
