import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * helmet's headers (nosniff, HSTS, no framing, no referrer, same-origin COOP/CORP, …) on every response.
 * The API answers JSON, which needs no sources, so its Content-Security-Policy allows nothing; the docs
 * page at /api/docs sends a policy of its own (docs.ts). Registered first, so that responses refused
 * by a later onRequest hook (401, 429) carry the headers too.
 */
export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { defaultSrc: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"], frameAncestors: ["'none'"] },
    },
    frameguard: { action: 'deny' },
  });
}
