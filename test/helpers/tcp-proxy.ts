import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { onCleanup, type Cleanup } from './cleanup';
import { joinSockets, socketSet } from './sockets';

export interface TcpProxy {
  port: number;
  /** Refuses new connections and drops every open one, as a database host that went away does. */
  cut: () => Promise<void>;
  /** Listens again on the same port. */
  restore: () => Promise<void>;
}

/** A TCP proxy on loopback to `target` (host:port) that can be cut and restored; closed when `t` ends. */
export async function startTcpProxy(t: Cleanup, target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = socketSet();
  const server = net.createServer((client) => {
    joinSockets(sockets.add(client), sockets.add(net.connect(target.port, target.host)));
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const cut = () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    sockets.destroyAll();
    return closed;
  };
  onCleanup(t, () => (server.listening ? cut() : undefined));
  return { port, cut, restore: () => listen(port) };
}
