import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * What an incoming `Request-Id` may be to be kept: what a proxy, a load balancer or a client library
 * generates (a UUID, a ULID, `req_…`, `1-5f84…:abc`), short and of plain characters, so that it can go
 * into every log line and back into a response header as it is. Anything else is replaced.
 */
const WELL_FORMED = /^[A-Za-z0-9][A-Za-z0-9._:+/=-]{0,127}$/;

/**
 * The request's id (Fastify's `request.id`, the `reqId` of each of its log lines, and the response's
 * `Request-Id`): the caller's own `Request-Id` when it is well-formed, else a new UUID.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['request-id'];
  return typeof given === 'string' && WELL_FORMED.test(given) ? given : randomUUID();
}
