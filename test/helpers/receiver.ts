import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/**
 * A real HTTP receiver on loopback. `respond` decides each answer (status, and an optional delay
 * before it); every request is kept in `requests`, in arrival order. `inFlight` counts the requests
 * received and not yet answered, `maxInFlight` the most there ever were at once.
 */
export async function startReceiver(respond: (req: ReceivedRequest, index: number) => { status: number; delayMs?: number } = () => ({ status: 200 })) {
  const requests: ReceivedRequest[] = [];
  const load = { inFlight: 0, maxInFlight: 0 };
  const server = http.createServer((req, res) => {
    load.inFlight++;
    load.maxInFlight = Math.max(load.maxInFlight, load.inFlight);
    res.on('close', () => load.inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() };
      requests.push(received);
      const answer = respond(received, requests.length - 1);
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'text/plain' }).end('ok');
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    load,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
