import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { onCleanup, type Cleanup } from './cleanup';

/** Postgres' SSLRequest: length 8, code 80877103. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

export interface TlsFiles {
  dir: string;
  /** The CA that signed the server certificates. */
  ca: string;
  /** A CA that signed nothing here. */
  otherCa: string;
}

/** A CA, a server certificate for 127.0.0.1 and one for another name, made with the openssl CLI; removed when `t` ends. */
export function makeCertificates(t: Cleanup): TlsFiles & { server: { key: string; cert: string }; elsewhere: { key: string; cert: string } } {
  const dir = mkdtempSync(path.join(tmpdir(), 'pg-tls-'));
  onCleanup(t, async () => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  for (const ca of ['ca', 'other-ca']) openssl('req', '-x509', ...ec, '-keyout', file(`${ca}.key`), '-out', file(`${ca}.pem`), '-days', '1', '-subj', `/CN=${ca}`);
  const leaf = (name: string, san: string) => {
    openssl('req', ...ec, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', `/CN=${name}`);
    writeFileSync(file(`${name}.ext`), `subjectAltName=${san}\n`);
    openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file(`${name}.pem`), '-days', '1', '-extfile', file(`${name}.ext`));
    return { key: readFileSync(file(`${name}.key`), 'utf8'), cert: readFileSync(file(`${name}.pem`), 'utf8') };
  };
  return { dir, ca: file('ca.pem'), otherCa: file('other-ca.pem'), server: leaf('server', 'IP:127.0.0.1'), elsewhere: leaf('elsewhere', 'DNS:elsewhere.example') };
}

/**
 * A Postgres server with TLS, for tests, in front of the real one at `upstream` (host:port): it answers a
 * client's SSLRequest with 'S', ends TLS with `identity`, and passes the decrypted protocol on in plain
 * text. `handshakes` counts the TLS sessions it ended; a client that asks for no TLS is passed on as is.
 */
export async function startPostgresTlsProxy(t: Cleanup, upstream: { host: string; port: number }, identity: { key: string; cert: string }) {
  const stats = { handshakes: 0, plain: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.once('data', (first) => {
      socket.pause();
      const onward = net.connect(upstream.port, upstream.host);
      sockets.add(onward);
      onward.on('error', () => socket.destroy());
      if (first.equals(SSL_REQUEST)) {
        socket.write('S');
        const secure = new tls.TLSSocket(socket, { isServer: true, key: identity.key, cert: identity.cert });
        secure.on('secure', () => stats.handshakes++);
        secure.on('error', () => onward.destroy());
        secure.pipe(onward).pipe(secure);
      } else {
        stats.plain++;
        onward.write(first);
        socket.pipe(onward).pipe(socket);
        socket.resume();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(t, () => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as net.AddressInfo).port, stats };
}
