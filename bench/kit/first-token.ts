import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Time to first token as an SSE client sees it (bench/runs.ts `ttft`): from the provider's first byte
 * (bench/kit/model-server.ts `onFirstByte`) to the client's first piece of text, for our runs (the API's
 * `GET /api/runs/:id/events`, its first `event: delta`) and for a bare proxy of the same provider's stream
 * (a minimal Node http server piping the provider's SSE to the client: the least any relay costs).
 * Everything runs in this process or on loopback, so both ends read the same clock (performance.now()).
 */

/** An SSE response read to its end: when its headers came, and when the first chunk `isText` holds arrived. */
export interface SseTimes {
  openedAt: number;
  firstTextAt: number | null;
}

/** Sends the request and reads its SSE answer to the end; `isText`: whether the text so far holds a piece of the answer. */
export function readSse(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  isText: (soFar: string) => boolean,
  /** Told when the answer's headers came: the client is listening. */
  onOpen: () => void = () => {},
): Promise<SseTimes> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method, headers: init.headers, agent: false }, (res) => {
      const openedAt = performance.now();
      onOpen();
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`${init.method} ${url} answered ${res.statusCode}`));
        return;
      }
      let soFar = '';
      let firstTextAt: number | null = null;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (firstTextAt !== null) return;
        soFar += chunk;
        if (isText(soFar)) firstTextAt = performance.now();
      });
      res.on('end', () => resolve({ openedAt, firstTextAt }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Our stream's first text: an `event: delta`. */
export const hasDelta = (soFar: string) => soFar.includes('event: delta');
/** A Chat Completions stream's first text: a chunk whose delta has content (the first chunk's is empty). */
export const hasContentChunk = (soFar: string) => /"delta":\{"content":"[^"]/.test(soFar);

/**
 * The bare proxy: `POST /v1/chat/completions` forwarded to `providerBaseUrl`, its answer piped back as it
 * comes, chunk by chunk (no buffering, no parsing).
 */
export async function startBareProxy(providerBaseUrl: string): Promise<{ url: string; close: () => Promise<void> }> {
  const target = new URL(`${providerBaseUrl}/chat/completions`);
  const upstream = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const out = http.request(target, { method: 'POST', headers: { 'content-type': 'application/json' }, agent: upstream }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        upstream.destroy();
        server.close(() => resolve());
      }),
  };
}
