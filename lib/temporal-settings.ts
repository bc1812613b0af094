import { loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/client';

/**
 * How this process reaches Temporal: what both the API's `Connection` and the worker's `NativeConnection`
 * take. `tls` holds the client key and `apiKey` is a secret: neither is ever logged (see `describe`).
 */
export interface TemporalConnectionSettings {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

export interface TemporalSettings {
  connection: TemporalConnectionSettings;
  namespace: string;
  /** What a log line may say of the connection's security: "plaintext", "TLS", "mTLS (client certificate)", "TLS with an API key". */
  security: string;
}

const ADDRESS = /^[^\s:]+:\d+$/;

/** A problem with the Temporal settings, named by the variable (or profile field) at fault; the message holds no secret. */
export class TemporalSettingsError extends Error {}

const toBuffer = (data: Uint8Array | undefined) => (data === undefined ? undefined : Buffer.from(data));

/**
 * The Temporal connection from the standard configuration, read by `@temporalio/envconfig` exactly as
 * the Temporal CLI reads it: the profile `TEMPORAL_PROFILE` (default `default`) of the TOML file
 * `TEMPORAL_CONFIG_FILE` (default `~/.config/temporalio/temporal.toml`; none is fine), overridden by
 * `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS*` and `TEMPORAL_GRPC_META_*`.
 * The namespace defaults to `default`; an address is required.
 */
export function loadTemporalSettings(env: Record<string, string>): TemporalSettings {
  let connect;
  try {
    connect = toClientOptions(loadClientConfigProfile({ overrideEnvVars: env }));
  } catch (err) {
    const where = env.TEMPORAL_CONFIG_FILE ? `TEMPORAL_CONFIG_FILE (${env.TEMPORAL_CONFIG_FILE})` : env.TEMPORAL_PROFILE ? `TEMPORAL_PROFILE (${env.TEMPORAL_PROFILE})` : 'TEMPORAL_TLS_*';
    throw new TemporalSettingsError(`${where}: ${describeLoadError(err)}`);
  }
  const { address, tls, apiKey, metadata } = connect.connectionOptions;
  if (!address) throw new TemporalSettingsError('TEMPORAL_ADDRESS: is required (or an `address` in the TEMPORAL_PROFILE profile of the Temporal config file)');
  if (!ADDRESS.test(address)) throw new TemporalSettingsError('TEMPORAL_ADDRESS: must be host:port');
  const ownTls: TLSConfig | boolean | undefined =
    tls && typeof tls === 'object'
      ? {
          serverNameOverride: tls.serverNameOverride,
          serverRootCACertificate: toBuffer(tls.serverRootCACertificate),
          clientCertPair: tls.clientCertPair ? { crt: Buffer.from(tls.clientCertPair.crt), key: Buffer.from(tls.clientCertPair.key) } : undefined,
        }
      : (tls ?? undefined);
  if (ownTls && typeof ownTls === 'object') dropUndefined(ownTls);
  const connection: TemporalConnectionSettings = { address };
  if (ownTls !== undefined) connection.tls = ownTls;
  if (typeof apiKey === 'string') connection.apiKey = apiKey;
  // envconfig's gRPC metadata comes from TEMPORAL_GRPC_META_* and the profile's grpc_meta: strings.
  if (metadata && Object.keys(metadata).length > 0) connection.metadata = Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, String(v)]));
  return { connection, namespace: connect.namespace || 'default', security: describeSecurity(connection) };
}

function dropUndefined(o: object): void {
  for (const [k, v] of Object.entries(o)) if (v === undefined) delete (o as Record<string, unknown>)[k];
}

function describeSecurity(c: TemporalConnectionSettings): string {
  if (!c.tls) return c.apiKey ? 'plaintext with an API key' : 'plaintext';
  const clientCert = typeof c.tls === 'object' && c.tls.clientCertPair;
  if (clientCert) return c.apiKey ? 'mTLS (client certificate) with an API key' : 'mTLS (client certificate)';
  return c.apiKey ? 'TLS with an API key' : 'TLS';
}

/** envconfig's errors name files and fields, never their contents; a TOML syntax error names its line. */
function describeLoadError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT' || e.code === 'EACCES') return `cannot read ${e.path ?? 'a file'} (${e.code})`;
  return (e.message ?? String(err)).split('\n')[0]!;
}
