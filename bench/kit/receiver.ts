import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as a receiver saw it, once its body has been read. */
export interface Received {
  /** Path and query. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** performance.now() when the body had arrived. */
  at: number;
}

export interface Answer {
  /** 200 unless given. */
  status?: number;
  /** A string as it is, anything else as JSON (with its content type); empty unless given. */
  body?: unknown;
  /** How long to hold the answer. */
  delayMs?: number;
}

export interface Receiver {
  /** http://127.0.0.1:<port> (no trailing slash). */
  url: string;
  /** Requests received so far. */
  received: () => number;
  close: () => Promise<void>;
}

/**
 * A real HTTP endpoint on loopback for what a bench's stack calls (webhook deliveries, tools). `answer`
 * sees each request once its body is in and says what to answer (200 at once when it says nothing).
 */
export async function startReceiver(answer: (req: Received) => Answer | void = () => {}): Promise<Receiver> {
  let received = 0;
  const held = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received++;
      const { status = 200, body, delayMs = 0 } = answer({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() }) ?? {};
      const json = body !== undefined && typeof body !== 'string';
      const send = () => {
        if (!res.destroyed) res.writeHead(status, json ? { 'content-type': 'application/json' } : {}).end(json ? JSON.stringify(body) : body);
      };
      if (delayMs <= 0) return send();
      const timer = setTimeout(() => {
        held.delete(timer);
        send();
      }, delayMs);
      held.add(timer);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of held) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
