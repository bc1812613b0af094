import type dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { assertPublicAddresses, hostOf, isLocalhost, LookupsBusyError, parseTarget, resolveHost, TargetNotAllowedError } from './network';

/**
 * The one way the engine calls out (webhook deliveries, custom tools, data tools): Node's own HTTP
 * client, with the SSRF guard applied before the request. The target's name is resolved once (c-ares,
 * never the libuv thread pool: lib/network.ts), its addresses checked, and the socket connects only to
 * those addresses (the request's `lookup` answers them), so a name that re-resolves to a private address
 * after the check (DNS rebinding) is never reached. Redirects are not followed (a redirect could lead
 * anywhere); the whole exchange is bounded by `timeoutMs` (and by `signal`), and the response body is
 * read up to `maxResponseBytes`.
 */
export interface OutboundRequest {
  url: string;
  method: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  allowPrivate: boolean;
  /** DNS_SERVERS: the nameservers the target's name is resolved with (null: the system's). */
  dnsServers: readonly string[] | null;
  maxResponseBytes?: number;
  /** Tears the request down when aborted (a cancelled activity), rejecting with an OutboundError. */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  /** The response's headers, lower-case names (e.g. `retry-after`, see retryAfterMs). */
  headers: http.IncomingHttpHeaders;
  /** Up to maxResponseBytes of the body, as UTF-8 (bytes that are not UTF-8 read as U+FFFD). */
  body: string;
  /** The same bytes as received: what is not text is judged from them (lib/response-snippet.ts). */
  bytes: Buffer;
}

/** Why a request got no HTTP response: refused target, DNS, connection, timeout. The message is fit to store. */
export class OutboundError extends Error {}

const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * The `lookup` of every outbound socket: the addresses that were resolved and checked before the request,
 * never a new resolution. Exported for its test.
 */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const list: dns.LookupAddress[] = addresses.map((address) => ({ address, family: ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4 }));
  return (hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? list.filter((a) => a.family === options.family) : list;
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, wanted);
    const first = wanted[0];
    if (!first) return callback(new Error(`${hostname} does not resolve`), '', 4);
    callback(null, first.address, first.family);
  };
}

/**
 * The addresses a request may connect to: resolved without the thread pool, and public unless allowed.
 * A refused target says so ("target not allowed: …"); a name that does not resolve says that alone.
 * `accountId`: whose share of lookups it takes (lib/network.ts); the engine's own requests take none.
 */
export async function checkedAddresses(
  req: Pick<OutboundRequest, 'url' | 'allowPrivate' | 'dnsServers' | 'signal'> & { accountId?: string | null },
): Promise<{ url: URL; addresses: string[] }> {
  let url: URL;
  try {
    url = parseTarget(req.url, true);
    if (!req.allowPrivate && isLocalhost(hostOf(url).toLowerCase())) throw new TargetNotAllowedError('must not point at a loopback address');
  } catch (err) {
    throw new OutboundError(`target not allowed: ${(err as Error).message}`);
  }
  const host = hostOf(url);
  let addresses: string[];
  try {
    addresses = await resolveHost(host, { servers: req.dnsServers, accountId: req.accountId ?? null, signal: req.signal });
  } catch (err) {
    if (err instanceof LookupsBusyError) throw err; // the account's share of lookups is full: a 429 for the API, not the target's fault
    throw new OutboundError((err as Error).message);
  }
  try {
    assertPublicAddresses(host, addresses, req.allowPrivate);
  } catch (err) {
    throw new OutboundError(`target not allowed: ${(err as Error).message}`);
  }
  return { url, addresses };
}

export async function sendOutbound(req: OutboundRequest): Promise<OutboundResponse> {
  const { url, addresses } = await checkedAddresses(req);
  const client = url.protocol === 'https:' ? https : http;
  const limit = req.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;

  if (req.signal?.aborted) throw new OutboundError('the request was aborted');

  return new Promise<OutboundResponse>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', abort);
    };
    const fail = (err: Error) => {
      done();
      reject(err instanceof OutboundError ? err : new OutboundError(describe(err, url.hostname)));
    };
    const request = client.request(
      url,
      {
        method: req.method,
        headers: { 'user-agent': 'agent-platform/1', ...req.headers, ...(req.body !== undefined ? { 'content-length': Buffer.byteLength(req.body) } : {}) },
        lookup: pinnedLookup(addresses),
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          if (size >= limit) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size >= limit) response.destroy();
        });
        const finish = () => {
          done();
          const bytes = Buffer.concat(chunks).subarray(0, limit);
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: bytes.toString('utf8'), bytes });
        };
        response.on('end', finish);
        response.on('close', () => {
          if (size >= limit) finish(); // destroyed at the size limit: keep what was read
          else if (!response.complete) fail(new OutboundError('the response ended early (connection closed or timed out)'));
        });
        response.on('error', fail);
      },
    );
    // The whole exchange, response body included.
    const timer = setTimeout(() => request.destroy(new OutboundError(`timed out after ${req.timeoutMs} ms`)), req.timeoutMs);
    const abort = () => request.destroy(new OutboundError('the request was aborted'));
    req.signal?.addEventListener('abort', abort, { once: true });
    request.on('error', fail);
    request.end(req.body);
  });
}

/**
 * How long a `Retry-After` header asks to wait, in ms from `now` (RFC 9110 § 10.2.3): delta seconds
 * (`120`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`, in the past: 0). Null when absent or
 * unreadable (then the caller's own schedule applies).
 */
export function retryAfterMs(value: string | string[] | undefined, now: number = Date.now()): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Math.min(Number(text), Number.MAX_SAFE_INTEGER / 1000) * 1000;
  // An HTTP date names its weekday and zone; Date.parse alone would also take "5" or "2030".
  if (!/^[A-Za-z]{3},? .*\d{2}:\d{2}:\d{2}/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

type SocketError = Error & { code?: string; address?: string; errors?: SocketError[] };

/**
 * The error as it is stored (a delivery's lastError, a tool's error). Socket errors name the address they
 * connected to (`connect ECONNREFUSED 10.0.0.7:443`, or several in an AggregateError when both address
 * families were tried): it is replaced by the host as written, so no stored text maps internal DNS.
 */
export function describe(err: SocketError, host: string): string {
  if (err instanceof TargetNotAllowedError) return `target not allowed: ${err.message}`;
  const addresses = new Set([err, ...(err.errors ?? [])].map((e) => e.address).filter((a): a is string => typeof a === 'string' && a !== host));
  let message = err.message || (err.errors ?? []).map((e) => e.message).join('; ');
  for (const address of addresses) message = message.split(address).join(host);
  return err.code ? `${err.code}: ${message}` : message;
}
