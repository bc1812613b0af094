import ipaddr from 'ipaddr.js';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The console's way of holding a refresh token (docs/api.md § Authentication and tokens, *The console's session*): a request with
 * `X-Client: console` gets its refresh token as the cookie `ap_refresh` instead of in the body, and
 * refresh and logout read it from there when the body has none. Scripts keep the body.
 *
 * Over https (directly, or per X-Forwarded-Proto from a trusted proxy) the cookie is
 * `__Host-ap_refresh` (Secure, Path=/, no Domain): a browser takes a cookie of that name only from
 * the host itself, so a sibling subdomain cannot plant one (login fixation), and only that name is read.
 */
export const REFRESH_COOKIE = 'ap_refresh';
export const HOST_REFRESH_COOKIE = '__Host-ap_refresh';
export const CONSOLE_CLIENT_HEADER = 'x-client';
const COOKIE_PATH = '/api/auth';

/** The cookie's name and path for this request: `__Host-` over https, as in §12 otherwise. */
function cookieOf(request: FastifyRequest): { name: string; path: string; secure: boolean } {
  if (request.protocol === 'https') return { name: HOST_REFRESH_COOKIE, path: '/', secure: true };
  return { name: REFRESH_COOKIE, path: COOKIE_PATH, secure: !servedOverLoopbackHttp(request) };
}

export function isConsoleRequest(request: FastifyRequest): boolean {
  return request.headers[CONSOLE_CLIENT_HEADER] === 'console';
}

/** The refresh token a console request carries in its cookie, if any. */
export function refreshCookieOf(request: FastifyRequest): string | undefined {
  const value = request.cookies[cookieOf(request).name];
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
 * HttpOnly (no script reads it), SameSite=Strict (no other site's page makes the browser send it).
 * Over https: `__Host-ap_refresh`, Secure, Path=/ (the prefix demands both), no Domain. Otherwise
 * `ap_refresh`, Path=/api/auth (sent to nothing else), Secure unless served over loopback http.
 */
export function setRefreshCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number): void {
  const { name, path, secure } = cookieOf(request);
  reply.setCookie(name, token, { httpOnly: true, sameSite: 'strict', path, secure, maxAge: maxAgeSeconds });
}

export function clearRefreshCookie(request: FastifyRequest, reply: FastifyReply): void {
  const { name, path, secure } = cookieOf(request);
  reply.clearCookie(name, { httpOnly: true, sameSite: 'strict', path, secure });
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
