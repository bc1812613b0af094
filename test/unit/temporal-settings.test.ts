import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../lib/config';

const base = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
  JWT_SECRET: 'x'.repeat(32),
  SECRETS_KEY: Buffer.alloc(32).toString('base64'),
  // No Temporal config file unless a test names one (a developer's own ~/.config/temporalio/temporal.toml is not read).
  TEMPORAL_CONFIG_FILE: path.join(os.tmpdir(), 'no-such-temporal.toml'),
};

const CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nsecret-key-material\n-----END PRIVATE KEY-----\n';

function tomlFile(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-toml-'));
  const file = path.join(dir, 'temporal.toml');
  fs.writeFileSync(file, text);
  return file;
}

describe('the Temporal connection from the standard configuration (@temporalio/envconfig)', () => {
  it('plaintext to TEMPORAL_ADDRESS in namespace default, as before', () => {
    const c = loadConfig({ ...base, TEMPORAL_ADDRESS: '127.0.0.1:7233' });
    assert.deepEqual(c.temporal.connection, { address: '127.0.0.1:7233' });
    assert.equal(c.temporal.address, '127.0.0.1:7233');
    assert.equal(c.temporal.namespace, 'default');
    assert.equal(c.temporal.security, 'plaintext');
  });

  it('Temporal Cloud with an API key: TLS on, the key sent, the namespace given', () => {
    const c = loadConfig({ ...base, TEMPORAL_ADDRESS: 'eu-west-1.aws.api.temporal.io:7233', TEMPORAL_NAMESPACE: 'prod.a1b2c', TEMPORAL_API_KEY: 'key-123' });
    assert.deepEqual(c.temporal.connection, { address: 'eu-west-1.aws.api.temporal.io:7233', tls: true, apiKey: 'key-123' });
    assert.equal(c.temporal.namespace, 'prod.a1b2c');
    assert.equal(c.temporal.security, 'TLS with an API key');
  });

  it('mTLS from TEMPORAL_TLS_* data, with a server name', () => {
    const c = loadConfig({
      ...base,
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_TLS_CLIENT_CERT_DATA: CERT,
      TEMPORAL_TLS_CLIENT_KEY_DATA: KEY,
      TEMPORAL_TLS_SERVER_CA_CERT_DATA: CERT,
      TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal',
    });
    const tls = c.temporal.connection.tls;
    assert.ok(tls && typeof tls === 'object');
    assert.equal(tls.serverNameOverride, 'frontend.temporal');
    assert.equal(tls.clientCertPair?.crt.toString(), CERT);
    assert.equal(tls.clientCertPair?.key.toString(), KEY);
    assert.equal(tls.serverRootCACertificate?.toString(), CERT);
    assert.equal(c.temporal.security, 'mTLS (client certificate)');
    assert.ok(!c.temporal.security.includes('secret-key-material'));
  });

  it('a TOML profile as the CLI reads it (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE), the environment over it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-pem-'));
    fs.writeFileSync(path.join(dir, 'client.pem'), CERT);
    fs.writeFileSync(path.join(dir, 'client.key'), KEY);
    const file = tomlFile(
      [
        '[profile.default]',
        'address = "localhost:7233"',
        '[profile.prod]',
        'address = "temporal.example.com:7233"',
        'namespace = "orders"',
        '[profile.prod.tls]',
        `client_cert_path = "${path.join(dir, 'client.pem')}"`,
        `client_key_path = "${path.join(dir, 'client.key')}"`,
      ].join('\n'),
    );
    const def = loadConfig({ ...base, TEMPORAL_CONFIG_FILE: file });
    assert.deepEqual(def.temporal.connection, { address: 'localhost:7233' });
    const prod = loadConfig({ ...base, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' });
    assert.equal(prod.temporal.address, 'temporal.example.com:7233');
    assert.equal(prod.temporal.namespace, 'orders');
    assert.equal(prod.temporal.security, 'mTLS (client certificate)');
    const overridden = loadConfig({ ...base, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod', TEMPORAL_NAMESPACE: 'staging', TEMPORAL_TLS: 'false' });
    assert.equal(overridden.temporal.namespace, 'staging');
    assert.equal(overridden.temporal.connection.tls, false);
    assert.equal(overridden.temporal.security, 'plaintext');
  });

  it('refuses, in one line naming the variable, what cannot be used; never showing a key', () => {
    const refused = (env: Record<string, string>, pattern: RegExp) =>
      assert.throws(() => loadConfig({ ...base, ...env }), (err: Error) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, pattern);
        assert.ok(!err.message.includes('secret-key-material'), err.message);
        return true;
      });
    refused({}, /TEMPORAL_ADDRESS: is required/);
    refused({ TEMPORAL_ADDRESS: 'localhost' }, /TEMPORAL_ADDRESS: must be host:port/);
    refused({ TEMPORAL_ADDRESS: 'a:1', TEMPORAL_TLS: 'yes' }, /TEMPORAL_TLS/);
    refused({ TEMPORAL_ADDRESS: 'a:1', TEMPORAL_PROFILE: 'nope', TEMPORAL_CONFIG_FILE: tomlFile('[profile.default]\naddress = "a:1"\n') }, /Profile 'nope' not found/);
    refused({ TEMPORAL_ADDRESS: 'a:1', TEMPORAL_TLS_CLIENT_CERT_PATH: '/no/such/cert.pem', TEMPORAL_TLS_CLIENT_KEY_DATA: KEY }, /cannot read \/no\/such\/cert\.pem \(ENOENT\)/);
    refused({ TEMPORAL_CONFIG_FILE: tomlFile('[profile.default]\napi_key = "secret-key-material\n') }, /TEMPORAL_CONFIG_FILE/);
  });
});
