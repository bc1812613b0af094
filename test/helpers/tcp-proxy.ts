import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { onCleanup, type Cleanup } from './cleanup';

export interface TcpProxy {
  port: number;
  /** Refuses new connections and drops every open one, as a database host that went away does. */
  cut: () => Promise<void>;
  /** Listens again on the same port. */
  restore: () => Promise<void>;
}

/** A TCP proxy on loopback to `target` (host:port) that can be cut and restored; closed when `t` ends. */
export async function startTcpProxy(t: Cleanup, target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
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
    for (const socket of sockets) socket.destroy();
    return closed;
  };
  onCleanup(t, () => (server.listening ? cut() : undefined));
  return { port, cut, restore: () => listen(port) };
}
