import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeConnectFailure } from '../../lib/temporal-failures';

/** The worker's NativeConnection.connect errors, as the SDK's Rust core words them (seen against a TLS proxy). */
const core = (inner: string) =>
  `Failed to call GetSystemInfo: code: 'Unknown error', message: "transport error", source: tonic::transport::Error(Transport, hyper::Error(Io, Custom { kind: InvalidData, error: "${inner}" }))`;

describe('one line for a failure to reach Temporal (lib/temporal-failures.ts)', () => {
  it('names a refused TLS handshake and what to set', () => {
    assert.equal(
      describeConnectFailure('t:7233', new Error(core('received fatal alert: CertificateRequired'))),
      "Temporal at t:7233 refused the TLS handshake (certificate required): set a client certificate it trusts (TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH, or the profile's tls)",
    );
    assert.match(describeConnectFailure('t:7233', new Error(core('received fatal alert: UnknownCA'))), /refused the TLS handshake \(unknown ca\)/);
  });

  it('names a server certificate we do not trust', () => {
    assert.match(
      describeConnectFailure('t:7233', new Error(core('invalid peer certificate: UnknownIssuer'))),
      /^Temporal at t:7233 presented a certificate we do not trust \(UnknownIssuer\): check TEMPORAL_TLS_SERVER_CA_CERT_PATH/,
    );
  });

  it('otherwise says it is not reachable, with the innermost reason', () => {
    assert.equal(describeConnectFailure('t:7233', new Error(core('Connection refused (os error 111)'))), 'Temporal at t:7233 is not reachable (Connection refused (os error 111))');
  });
});
