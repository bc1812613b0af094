import ipaddr from 'ipaddr.js';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The console's way of holding a refresh token (docs/api.md § Authentication and tokens, *The console's session*): a request with
 * `X-Client: console` gets its refresh token as the cookie `ap_refresh` instead of in the body, and
 * refresh and logout read it from there when the body has none. Scripts keep the body.
 */
export const REFRESH_COOKIE = 'ap_refresh';
export const CONSOLE_CLIENT_HEADER = 'x-client';
const COOKIE_PATH = '/api/auth';

export function isConsoleRequest(request: FastifyRequest): boolean {
  return request.headers[CONSOLE_CLIENT_HEADER] === 'console';
}

/** The refresh token a console request carries in its cookie, if any. */
export function refreshCookieOf(request: FastifyRequest): string | undefined {
  const value = request.cookies[REFRESH_COOKIE];
  return value ? value : undefined;
}

/** Plain http is acceptable only on loopback (a browser drops a Secure cookie sent over http). */
function servedOverLoopbackHttp(request: FastifyRequest): boolean {
  if (request.protocol !== 'http') return false;
  const host = request.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback';
}

/**
 * HttpOnly (no script reads it), SameSite=Strict (no other site's page makes the browser send it),
 * Path=/api/auth (sent to nothing else), Secure unless the console is served over loopback http.
 */
export function setRefreshCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number): void {
  reply.setCookie(REFRESH_COOKIE, token, {
    httpOnly: true,
    sameSite: 'strict',
    path: COOKIE_PATH,
    secure: !servedOverLoopbackHttp(request),
    maxAge: maxAgeSeconds,
  });
}

export function clearRefreshCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(REFRESH_COOKIE, { httpOnly: true, sameSite: 'strict', path: COOKIE_PATH, secure: !servedOverLoopbackHttp(request) });
}

/** A session or token pair as a console request gets it: the refresh token goes to the cookie, not the body. */
export function answerForConsole<T extends { refreshToken: string }>(
  request: FastifyRequest,
  reply: FastifyReply,
  tokens: T,
  maxAgeSeconds: number,
): T | Omit<T, 'refreshToken'> {
  if (!isConsoleRequest(request)) return tokens;
  setRefreshCookie(request, reply, tokens.refreshToken, maxAgeSeconds);
  const { refreshToken: _kept, ...rest } = tokens;
  return rest;
}
