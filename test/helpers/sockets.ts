import type net from 'node:net';

/** Pipes `a` and `b` into each other; either one's error or close ends both. */
export function joinSockets(a: net.Socket, b: net.Socket): void {
  a.pipe(b).pipe(a);
  const end = () => {
    a.destroy();
    b.destroy();
  };
  for (const socket of [a, b]) {
    socket.on('error', end);
    socket.on('close', end);
  }
}

/** The open sockets of a proxy, to drop them all at once (a cut, or the test's end). */
export function socketSet() {
  const sockets = new Set<net.Socket>();
  return {
    add(socket: net.Socket): net.Socket {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      return socket;
    },
    destroyAll(): void {
      for (const socket of sockets) socket.destroy();
    },
  };
}
