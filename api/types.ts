import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { WriteUnit } from '../db/write-unit';
import type { Access, Caller } from './services/access';

/** The Fastify instance as routes see it: zod schemas give typed params, bodies and replies. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every non-public route. */
    caller: Caller | null;
    /**
     * Set with `caller`: authenticates the request's credential again (a request that lasts, such as a live
     * run stream, asks from time to time); false once it no longer lets the same caller through.
     */
    callerStillAllowed: (() => Promise<boolean>) | null;
    /** A POST with an Idempotency-Key: its claim, and the write unit its work and response share. */
    /** `unit` null: the key was claimed in a transaction of its own (a route that `callsTemporal`). */
    idempotency?: { unit: WriteUnit | null; callerId: string; key: string };
  }
  interface FastifyContextConfig {
    /** Reachable without a credential. */
    public?: boolean;
    /**
     * What the caller's role in the account the request acts in must allow (services/access.ts); checked
     * by the authentication hook. Required on every route that is not public.
     */
    access?: Access;
    /**
     * Checks that may wait on the network (a URL's lookup), run after validation and before the request
     * takes a database connection for its writes (api/plugins/preflight.ts). Throws like a service.
     */
    preflight?: (request: FastifyRequest) => Promise<void>;
    /**
     * The handler calls Temporal (a run's cancel): with an Idempotency-Key, the key is claimed and its answer
     * stored in short transactions of their own and the handler runs outside a write unit, so no pooled
     * connection is held while Temporal answers (docs/architecture.md § Limits and fairness).
     */
    callsTemporal?: boolean;
  }
}

/** The renewed access check of an authenticated route's caller (the hook sets it with the caller). */
export function callerCheckOf(request: { callerStillAllowed: (() => Promise<boolean>) | null }): () => Promise<boolean> {
  if (!request.callerStillAllowed) throw new Error('callerCheckOf used on a public route');
  return request.callerStillAllowed;
}

/** The caller of an authenticated route (the hook guarantees it is set). */
export function callerOf(request: { caller: Caller | null }): Caller {
  if (!request.caller) throw new Error('callerOf used on a public route');
  return request.caller;
}
