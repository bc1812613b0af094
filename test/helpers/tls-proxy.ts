import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { onCleanup, type Cleanup } from './cleanup';
import { joinSockets, socketSet } from './sockets';

export interface TlsProxy {
  /** 127.0.0.1:<port>, as TEMPORAL_ADDRESS takes it. */
  address: string;
  /** Handshakes completed with a trusted client certificate, and handshakes refused. */
  counts: { accepted: number; refused: number };
}

/**
 * A TLS-terminating proxy in front of a plain-TCP gRPC server (the Temporal dev server), as a secured
 * cluster's front door is: it speaks h2 over TLS (ALPN), demands a client certificate signed by `ca` and
 * refuses the handshake without one; accepted connections are piped to `target`. Closed when `t` ends.
 */
export async function startTlsProxy(t: Cleanup, options: { target: string; cert: string; key: string; ca: string }): Promise<TlsProxy> {
  const colon = options.target.lastIndexOf(':');
  const targetHost = options.target.slice(0, colon);
  const targetPort = Number(options.target.slice(colon + 1));
  const counts = { accepted: 0, refused: 0 };
  const sockets = socketSet();
  const server = tls.createServer(
    {
      cert: fs.readFileSync(options.cert),
      key: fs.readFileSync(options.key),
      ca: fs.readFileSync(options.ca),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (client) => {
      counts.accepted++;
      joinSockets(client, sockets.add(net.connect(targetPort, targetHost)));
    },
  );
  server.on('tlsClientError', () => counts.refused++);
  server.on('connection', (socket: net.Socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(t, () => {
    sockets.destroyAll();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, counts };
}
