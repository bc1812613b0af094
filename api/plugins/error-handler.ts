import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { PoolBusyError } from '../../db/pool';
import { AppError } from '../errors';
import { isMissing } from '../validation';
import type { PageFallback } from './console';

/** "body.memoryConfig.maxMessages: Too big: expected number to be <=10000" */
function describeValidation(context: string, input: unknown, v: { instancePath: string; message?: string }): string {
  const segments = v.instancePath.split('/').filter(Boolean);
  const where = [context, ...segments].join('.');
  return `${where}: ${segments.length > 0 && isMissing(input, segments) ? 'is required' : (v.message ?? 'is invalid')}`;
}

const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'Malformed JSON in request body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Request body is empty but Content-Type is application/json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is larger than 1 MiB',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type; send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
};

/** Socket errors of a connection to Postgres that could not be made or was lost. */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** SQLSTATEs of a server that is shutting down, starting, or out of connections: 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300 too_many_connections. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** node-postgres' own words for a connection it lost or could not get from the pool in time. */
const PG_CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated due to connection timeout)/;
/** Seconds a client is asked to wait before trying again while the database is unavailable. */
const DATABASE_RETRY_AFTER_SECONDS = 5;
/** Seconds a client is asked to wait when every pooled connection was in use for DATABASE_CONNECT_TIMEOUT_MS. */
const POOL_BUSY_RETRY_AFTER_SECONDS = 2;

/**
 * An outage of Postgres (unreachable, restarting, failing over), not a fault of ours: the request may
 * succeed again shortly. Connection errors (class 08), the errors above, and a pool connect that timed out.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (CONNECTION_ERRNOS.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    if (typeof e.message === 'string' && PG_CONNECTION_MESSAGES.test(e.message)) return true;
    // net.connect with several addresses (localhost: ::1 and 127.0.0.1) fails with an AggregateError.
    if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((inner) => isDatabaseUnavailable(inner))) return true;
  }
  return false;
}

/**
 * The one error handler (docs/api.md § Errors): every error becomes `{ message }`. Domain errors carry their
 * status; validation names the field; anything unexpected is a 500 whose details stay in the log.
 */
export function installErrorHandling(app: FastifyInstance, pages?: PageFallback): void {
  /** Paths a route without parameters owns, with its methods (HEAD with GET: Fastify adds it as a route of its own). */
  const ownedPaths = new Map<string, Set<string>>();
  /** No route: the console's page when a browser asks for one outside /api (plugins/console.ts), else 405 or 404. */
  const answerNoRoute = (request: FastifyRequest, reply: FastifyReply) =>
    pages?.(request, reply) ? reply : answerUnrouted(app, ownedPaths, request, reply);
  app.setErrorHandler((err: FastifyError, request, reply) => {
    // Fastify reads the body of a request that matched no route before its not-found handler runs (and
    // refuses a QUERY without Content-Type there): what it finds wrong with a body no route would read
    // is no answer; that there is no such route is.
    if (request.is404) return answerNoRoute(request, reply);
    if (hasZodFastifySchemaValidationErrors(err)) {
      const context = (err as { validationContext?: string }).validationContext ?? 'body';
      // A malformed id is an id that names nothing.
      if (context === 'params') return reply.code(404).send({ message: 'Not found' });
      const input = context === 'querystring' ? request.query : (request as unknown as Record<string, unknown>)[context];
      return reply.code(400).send({ message: describeValidation(context, input, err.validation[0]!) });
    }
    if (err instanceof AppError) {
      if (err.retryAfterSeconds !== undefined) reply.header('Retry-After', String(err.retryAfterSeconds));
      return reply.code(err.statusCode).send({ message: err.message });
    }
    if (err instanceof SyntaxError && (err as FastifyError).statusCode === 400) {
      return reply.code(400).send({ message: FASTIFY_MESSAGES.FST_ERR_CTP_INVALID_JSON_BODY });
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ message: (err.code && FASTIFY_MESSAGES[err.code]) || err.message });
    }
    // Before the outage check: the busy pool's error carries node-postgres' wait timeout as its cause.
    if (err instanceof PoolBusyError) {
      request.log.warn('database pool busy: no connection within DATABASE_CONNECT_TIMEOUT_MS');
      return reply
        .code(503)
        .header('Retry-After', String(POOL_BUSY_RETRY_AFTER_SECONDS))
        .send({ message: `The database is busy; try again in ${POOL_BUSY_RETRY_AFTER_SECONDS} s` });
    }
    if (isDatabaseUnavailable(err)) {
      request.log.warn({ code: err.code }, `database unavailable: ${err.message}`);
      return reply
        .code(503)
        .header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS))
        .send({ message: `The database is unavailable; try again in ${DATABASE_RETRY_AFTER_SECONDS} s` });
    }
    request.log.error({ err }, 'unhandled error');
    return reply.code(500).send({ message: 'Internal server error' });
  });

  app.setNotFoundHandler(answerNoRoute);

  // A path that a route of its own owns (no parameter in its URL) is that route's resource under every method:
  // the router hands a request to it under another method to a parametric sibling instead (PUT
  // /api/agents/import to /api/agents/:id, id "import", which answers 404 for the id); it is a 405 with the
  // path's own methods, like any method a path does not have, before authentication as those are.
  app.addHook('onRoute', (route) => {
    if (/[:*]/.test(route.url)) return;
    const methods = ownedPaths.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) methods.add(method);
    ownedPaths.set(route.url, methods);
  });
  app.addHook('onRequest', (request, reply, done) => {
    const owned = /[:*]/.test(request.routeOptions.url ?? '') ? ownedPaths.get(routerPath(request)) : undefined;
    if (owned && !owned.has(request.method)) methodNotAllowed(request, reply, [...owned].sort()); // answered: done is not called
    else done();
  });
}

/** The request's path as the router matches it: no query, no trailing slash (ignoreTrailingSlash). */
function routerPath(request: FastifyRequest): string {
  const path = request.url.split('?')[0]!;
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function methodNotAllowed(request: FastifyRequest, reply: FastifyReply, allowed: string[]): FastifyReply {
  const path = request.url.split('?')[0]!;
  return reply
    .code(405)
    .header('Allow', allowed.join(', '))
    .send({ message: `Method ${request.method} is not allowed on ${path}; it allows ${allowed.join(', ')}` });
}

/**
 * A request that matched no route: 405 with what the path allows (RFC 9110 §15.5.6) when the path exists
 * under other methods (a path a route owns: that route's methods only), else 404.
 */
function answerUnrouted(app: FastifyInstance, ownedPaths: Map<string, Set<string>>, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0]!;
  const owned = ownedPaths.get(routerPath(request));
  const allowed = owned ? [...owned].sort() : app.supportedMethods.filter((method) => app.findRoute({ method, url: path }) !== null).sort();
  if (allowed.length > 0) return methodNotAllowed(request, reply, allowed);
  return reply.code(404).send({ message: `Route ${request.method} ${path} not found` });
}

/**
 * Errors Fastify's router raises before any route or hook runs, which it would answer in a shape of its
 * own: a path segment longer than the router's 100 characters is an id that names nothing (404, like a
 * malformed id), and a path that is not valid percent-encoding is a 400.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return reply.code(404).send({ message: 'Not found' });
  if (err.code === 'FST_ERR_BAD_URL') return reply.code(400).send({ message: 'The URL path is not valid percent-encoding' });
  request.log.error({ err }, 'router error');
  return reply.code(500).send({ message: 'Internal server error' });
}
