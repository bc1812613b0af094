import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onCleanup, type Cleanup } from './cleanup';

export interface ReceivedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  /** Lower-case names; a header sent several times is joined with ", ". */
  headers: Record<string, string>;
  body: string;
  /** The body as sent (a binary one, such as protobuf, is not text). */
  bytes: Buffer;
  receivedAt: number;
  /** Set when the client closed the connection before the answer was sent (an aborted call). */
  aborted?: boolean;
}

export interface ReceiverAnswer {
  /** 200 unless given. */
  status?: number;
  /** A string is sent as text, a Buffer as its bytes (text/plain unless `headers` says), anything else as JSON; "ok" unless given. */
  body?: unknown;
  /** How long to hold the answer. */
  delayMs?: number;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
}

export interface Receiver {
  /** http://127.0.0.1:<port> (no trailing slash). */
  url: string;
  /** Every request, in arrival order. */
  requests: ReceivedRequest[];
  /** Requests received and not yet answered, and the most there ever were at once. */
  load: { inFlight: number; maxInFlight: number };
}

/**
 * A real HTTP server on loopback for what the platform calls (webhook receivers, tools' endpoints),
 * closed when `t` ends. `answer` decides each response from the request and its index in `requests`.
 */
export async function startReceiver(t: Cleanup, answer: (req: ReceivedRequest, index: number) => ReceiverAnswer = () => ({})): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const load = { inFlight: 0, maxInFlight: 0 };
  const held = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    load.inFlight++;
    load.maxInFlight = Math.max(load.maxInFlight, load.inFlight);
    res.on('close', () => load.inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
      const bytes = Buffer.concat(chunks);
      const request: ReceivedRequest = { method: req.method ?? '', url: req.url ?? '', headers, body: bytes.toString('utf8'), bytes, receivedAt: Date.now() };
      requests.push(request);
      res.on('close', () => {
        if (!res.writableEnded) request.aborted = true;
      });
      const { status = 200, body = 'ok', delayMs = 0, headers: extra = {} } = answer(request, requests.length - 1);
      const text = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      const type = typeof body === 'string' || Buffer.isBuffer(body) ? 'text/plain' : 'application/json';
      const timer = setTimeout(() => {
        held.delete(timer);
        if (!res.destroyed) res.writeHead(status, { 'content-type': type, ...extra }).end(text);
      }, delayMs);
      held.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(t, () => {
    for (const timer of held) clearTimeout(timer);
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, load };
}
