import http from 'node:http';
import https from 'node:https';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { checkedAddresses, describe, OutboundError, pinnedLookup } from '../outbound-http';

/**
 * The `fetch` the MCP client's transport is given (StreamableHTTPClientTransport's `fetch` option): every
 * request of one operation (connect, initialize, list or call, close) goes out as the engine's other
 * requests do (lib/outbound-http.ts): the target's name resolved without the thread pool, its addresses
 * checked against private ranges (unless allowed) and the socket pinned to them, so a name that re-resolves
 * elsewhere after the check (DNS rebinding) is never reached; no redirect followed here (the SDK follows one
 * within the same origin only, through this fetch again). Each response body is read up to
 * `maxResponseBytes`: past it the operation is stopped (`tooLarge`) and the body errors, so a server that
 * sends 50 MB costs at most that much memory and a clear error, never the process.
 */
export interface GuardedFetchOptions {
  allowPrivate: boolean;
  dnsServers: readonly string[] | null;
  /** Whose share of name lookups this takes (an API request's account); null for the engine's own. */
  accountId: string | null;
  maxResponseBytes: number;
  /** The operation's signal: aborts every request of it (time limit, cancelled step, answer too large). */
  signal: AbortSignal;
  /** Called once a response body passes maxResponseBytes (the caller stops the operation, naming why). */
  tooLarge: () => void;
}

/** Statuses whose Response may carry no body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** A request's headers as node takes them (the SDK passes a Headers object, a record or pairs). */
function headersOf(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** Node's response headers as a Headers object (repeated headers appended, as fetch does). */
function responseHeaders(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

export function guardedFetch(opts: GuardedFetchOptions): FetchLike {
  /** Each host is resolved and checked once per operation. */
  const resolved = new Map<string, ReturnType<typeof checkedAddresses>>();

  return async (input, init) => {
    const href = typeof input === 'string' ? input : input.href;
    const signal = init?.signal ? AbortSignal.any([init.signal, opts.signal]) : opts.signal;
    if (signal.aborted) throw new OutboundError('the request was aborted');
    const host = new URL(href).host;
    let check = resolved.get(host);
    if (!check) {
      check = checkedAddresses({ url: href, allowPrivate: opts.allowPrivate, dnsServers: opts.dnsServers, accountId: opts.accountId, signal });
      resolved.set(host, check);
    }
    const { url, addresses } = await check;
    const body = typeof init?.body === 'string' ? init.body : undefined;
    if (init?.body !== undefined && init.body !== null && body === undefined) throw new OutboundError('only text request bodies are sent');
    const client = url.protocol === 'https:' ? https : http;

    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      const request = client.request(
        href,
        {
          method: init?.method ?? 'GET',
          headers: { 'user-agent': 'agent-platform/1', ...headersOf(init), ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
          lookup: pinnedLookup(addresses),
          agent: false,
        },
        (response) => {
          settled = true;
          const status = response.statusCode ?? 0;
          if (status < 200 || status > 599) {
            response.destroy();
            signal.removeEventListener('abort', abort);
            reject(new OutboundError(`answered with HTTP status ${status}`));
            return;
          }
          const headers = responseHeaders(response.headers);
          if (NULL_BODY.has(status)) {
            response.resume();
            signal.removeEventListener('abort', abort);
            resolve(new Response(null, { status, statusText: response.statusMessage, headers }));
            return;
          }
          let size = 0;
          let finished = false;
          const stream = new ReadableStream<Uint8Array>(
            {
              start(controller) {
                const end = (err?: Error) => {
                  if (finished) return;
                  finished = true;
                  signal.removeEventListener('abort', abort);
                  if (err) controller.error(err);
                  else controller.close();
                };
                response.on('data', (chunk: Buffer) => {
                  if (finished) return;
                  size += chunk.length;
                  if (size > opts.maxResponseBytes) {
                    opts.tooLarge();
                    end(new OutboundError(`the answer is larger than ${opts.maxResponseBytes} bytes`));
                    response.destroy();
                    return;
                  }
                  controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
                  if ((controller.desiredSize ?? 1) <= 0) response.pause();
                });
                response.on('end', () => end());
                response.on('error', (err) => end(err instanceof OutboundError ? err : new OutboundError(describe(err, url.hostname))));
                response.on('close', () => {
                  if (!response.complete) end(new OutboundError('the response ended early (connection closed)'));
                });
              },
              pull() {
                response.resume();
              },
              cancel() {
                finished = true;
                signal.removeEventListener('abort', abort);
                response.destroy();
              },
            },
            { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
          );
          resolve(new Response(stream, { status, statusText: response.statusMessage, headers }));
        },
      );
      const abort = () => request.destroy(new OutboundError('the request was aborted'));
      signal.addEventListener('abort', abort, { once: true });
      request.on('error', (err) => {
        signal.removeEventListener('abort', abort);
        if (!settled) reject(err instanceof OutboundError ? err : new OutboundError(describe(err, url.hostname)));
      });
      request.end(body);
    });
  };
}
