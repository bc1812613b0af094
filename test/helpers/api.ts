import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';
type Headers = Record<string, string>;

/** What a request answered: the same fields whether it went through `app.inject` or over HTTP. */
export interface ApiResponse {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** The body as text. */
  body: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json<T = any>(): T;
}

/** Who calls: a user with an access token (`registerUser`), an access token, or nobody. */
export type Caller = { accessToken: string } | string | null | undefined;

export interface ApiClient {
  request(method: Method, url: string, payload?: unknown, headers?: Headers): Promise<ApiResponse>;
  get(url: string, headers?: Headers): Promise<ApiResponse>;
  delete(url: string, headers?: Headers): Promise<ApiResponse>;
  post(url: string, payload?: unknown, headers?: Headers): Promise<ApiResponse>;
  put(url: string, payload?: unknown, headers?: Headers): Promise<ApiResponse>;
  patch(url: string, payload?: unknown, headers?: Headers): Promise<ApiResponse>;
  /** The request, asserting a 2xx answer (the message names the request and what it answered); answers the parsed body. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ok<T = any>(method: Method, url: string, payload?: unknown, headers?: Headers): Promise<T>;
}

/**
 * The one client of the tests. `target` is the app (requests go through `app.inject`) or the base URL
 * of an API process (`http://127.0.0.1:<port>`, requests go over HTTP). A payload is JSON: an object
 * is serialised, a string sent as the exact bytes given, with `content-type: application/json` unless
 * `headers` name another; `undefined`, `null` and `''` send no body. `remoteAddress` (app only) is the client address the app sees.
 */
export function api(target: FastifyInstance | string, who?: Caller, options: { remoteAddress?: string } = {}): ApiClient {
  const token = typeof who === 'string' ? who : who?.accessToken;
  const send = async (method: Method, url: string, payload?: unknown, extra: Headers = {}): Promise<ApiResponse> => {
    const headers: Headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra };
    const hasBody = payload !== undefined && payload !== null && payload !== '';
    if (hasBody && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    if (typeof target !== 'string') {
      return target.inject({ method, url, headers, payload: payload as object | string | undefined, remoteAddress: options.remoteAddress });
    }
    const res = await fetch(`${target}${url}`, { method, headers, body: !hasBody || typeof payload === 'string' ? (payload as string | undefined) : JSON.stringify(payload) });
    const body = await res.text();
    return { statusCode: res.status, headers: Object.fromEntries(res.headers), body, json: () => JSON.parse(body) };
  };
  const request = (method: Method, url: string, payload?: unknown, headers?: Headers) => send(method, url, payload, headers);
  return {
    request,
    get: (url, headers) => send('GET', url, undefined, headers),
    delete: (url, headers) => send('DELETE', url, undefined, headers),
    post: (url, payload, headers) => send('POST', url, payload, headers),
    put: (url, payload, headers) => send('PUT', url, payload, headers),
    patch: (url, payload, headers) => send('PATCH', url, payload, headers),
    async ok(method, url, payload, headers) {
      const res = await send(method, url, payload, headers);
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    },
  };
}
