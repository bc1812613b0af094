import tls from 'node:tls';
import type { TemporalConnectionSettings } from './temporal-settings';

/**
 * One line an operator can act on for a failure to reach Temporal: a refused TLS handshake (a client
 * certificate missing or not trusted), a server certificate we do not trust, refused credentials, or
 * nothing answering. Built from the SDK's error or a TLS probe; never holds a key or an API key.
 */

const CLIENT_CERT_HINT = 'set a client certificate it trusts (TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH, or the profile\'s tls)';
const SERVER_CERT_HINT = 'check TEMPORAL_TLS_SERVER_CA_CERT_PATH and TEMPORAL_TLS_SERVER_NAME';

/** "CertificateRequired" → "certificate required". */
const words = (camel: string) => camel.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

export const tlsRefused = (address: string, reason: string) =>
  `Temporal at ${address} refused the TLS handshake (${reason}): ${CLIENT_CERT_HINT}`;

/** The worker's NativeConnection.connect error (Rust core: tonic / rustls) as one line. */
export function describeConnectFailure(address: string, err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  const alert = /received fatal alert: (\w+)/.exec(message);
  if (alert) return tlsRefused(address, words(alert[1]!));
  if (/peer closed connection without sending TLS close_notify/.test(message)) return tlsRefused(address, 'connection closed during the handshake');
  const badPeer = /invalid peer certificate: ([^"\\)]+)/.exec(message);
  if (badPeer) return `Temporal at ${address} presented a certificate we do not trust (${badPeer[1]!.trim()}): ${SERVER_CERT_HINT}`;
  if (/Unauthenticated|PermissionDenied|code: 'Unauthenticated'|code: 'PermissionDenied'/.test(message)) {
    return `Temporal at ${address} refused our credentials (check TEMPORAL_API_KEY or the client certificate)`;
  }
  const inner = /error: "([^"]+)"/.exec(message)?.[1] ?? /message: "([^"]+)"/.exec(message)?.[1] ?? message;
  return `Temporal at ${address} is not reachable (${inner})`;
}

const toBuffer = (data: Uint8Array | undefined) => (data === undefined ? undefined : Buffer.from(data));

/** HTTP/2's client connection preface and an empty SETTINGS frame: a gRPC server answers with its SETTINGS. */
const H2_PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);

/**
 * Opens one TLS connection as the Temporal client would (same CA, client certificate, server name, ALPN
 * h2) and says why the handshake failed, or null when the server answered (or TLS is off). The API's
 * gRPC client only reports "failed to connect before the deadline"; this names the cause.
 */
export function probeTls(settings: TemporalConnectionSettings, timeoutMs = 3_000): Promise<string | null> {
  if (!settings.tls) return Promise.resolve(null);
  const options = typeof settings.tls === 'object' ? settings.tls : {};
  const colon = settings.address.lastIndexOf(':');
  const host = settings.address.slice(0, colon).replace(/^\[|\]$/g, '');
  // SNI takes a name, not an address (RFC 6066).
  const servername = options.serverNameOverride ?? (/^[\d.:]+$/.test(host) ? undefined : host);
  return new Promise((resolve) => {
    let done = false;
    const finish = (result: string | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const socket = tls.connect({
      host,
      port: Number(settings.address.slice(colon + 1)),
      servername,
      ALPNProtocols: ['h2'],
      ca: toBuffer(options.serverRootCACertificate),
      cert: toBuffer(options.clientCertPair?.crt),
      key: toBuffer(options.clientCertPair?.key),
    });
    const timer = setTimeout(() => finish(null), timeoutMs);
    socket.on('secureConnect', () => socket.write(H2_PREFACE));
    socket.on('data', () => finish(null));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const alert = /alert (.+?)(?::|$)/.exec(err.message)?.[1];
      if (alert) return finish(tlsRefused(settings.address, alert.replace(/^tlsv1\d? ?/i, '').replace(/^alert /, '').trim()));
      if (/certificate|self.signed|unable to (get|verify)/i.test(err.message) || /CERT|SELF_SIGNED/.test(err.code ?? '')) {
        return finish(`Temporal at ${settings.address} presented a certificate we do not trust (${err.message}): ${SERVER_CERT_HINT}`);
      }
      if (err.code === 'ECONNRESET' && socket.authorized) return finish(tlsRefused(settings.address, 'connection closed after the handshake'));
      // Nothing listening is not a TLS problem; anything else during the handshake is.
      if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(err.code ?? '')) return finish(null);
      const reason = /routines:[^:]*:([^:]+)/.exec(err.message)?.[1] ?? err.message.split('\n')[0];
      finish(`the TLS handshake with Temporal at ${settings.address} failed (${reason}): is it a TLS endpoint?`);
    });
    socket.on('close', () => finish(socket.authorized ? tlsRefused(settings.address, 'connection closed after the handshake') : null));
  });
}
