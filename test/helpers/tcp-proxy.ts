import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { onCleanup, type Cleanup } from './cleanup';
import { joinSockets, socketSet } from './sockets';

export interface TcpProxy {
  port: number;
  /** Refuses new connections and drops every open one, as a database host that went away does. */
  cut: () => Promise<void>;
  /** Listens again on the same port (after cut), or forwards again (after hold). */
  restore: () => Promise<void>;
  /**
   * Drops every open connection and accepts new ones without ever answering, as a database host behind a
   * firewall that drops packets: a client's handshake waits for its own timeout.
   */
  hold: () => void;
}

/** A TCP proxy on loopback to `target` (host:port) that can be cut and restored; closed when `t` ends. */
export async function startTcpProxy(t: Cleanup, target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = socketSet();
  let holding = false;
  const server = net.createServer((client) => {
    if (holding) sockets.add(client).on('error', () => {}); // accepted, never answered
    else joinSockets(sockets.add(client), sockets.add(net.connect(target.port, target.host)));
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
  const hold = () => {
    holding = true;
    sockets.destroyAll();
  };
  const restore = async () => {
    if (holding) {
      holding = false;
      sockets.destroyAll();
    }
    if (!server.listening) await listen(port);
  };
  return { port, cut, restore, hold };
}

/** A proxy in front of the Postgres server of `databaseUrl`, and the same URL through it. */
export async function proxyToDatabase(t: Cleanup, databaseUrl: string): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(databaseUrl);
  const proxy = await startTcpProxy(t, { host: target.hostname, port: Number(target.port || 5432) });
  const proxied = new URL(databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return { proxy, url: proxied.toString() };
}
