import rateLimit, { type FastifyRateLimitStore, type RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { RequestGuardsRepository } from '../../db/repositories/request-guards';
import { AppError } from '../errors';

/**
 * @fastify/rate-limit with its counters in Postgres, so every API instance shares them
 * (DESIGN §3). Routes opt in with `config: { rateLimit: authRateLimit }`.
 */
export async function registerAuthRateLimit(
  app: FastifyInstance,
  opts: { guards: RequestGuardsRepository; max: number; windowMs: number },
): Promise<RateLimitOptions> {
  const { guards } = opts;

  class PostgresStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow?: number): void {
      guards.hitRateLimit(key, timeWindow ?? opts.windowMs).then(
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

  return {
    max: opts.max,
    timeWindow: opts.windowMs,
    // One budget per client IP shared by all the auth endpoints.
    keyGenerator: (request) => `auth:${request.ip}`,
    errorResponseBuilder: (_request, context) =>
      new AppError(429, `Too many authentication requests; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} seconds`),
  };
}
