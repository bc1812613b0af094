import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { makeCertificates } from '../helpers/certificates';
import { onCleanup } from '../helpers/cleanup';
import { testEnv } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';
import { testNamespace } from '../helpers/namespace';
import { freePort, startProcess, waitFor, waitForApi } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';
import { startTlsProxy } from '../helpers/tls-proxy';

/**
 * A secured Temporal: the dev server behind a TLS-terminating proxy that demands a client certificate
 * signed by its CA (certificates made here). The worker reads a TOML profile (TEMPORAL_CONFIG_FILE,
 * TEMPORAL_PROFILE), the API the TEMPORAL_TLS_* variables, both through @temporalio/envconfig.
 */

const namespace = testNamespace(__filename);
const API_KEY = 'temporal-api-key-that-no-log-line-shows';

/** What no log line may hold: the client key's body and the API key. */
function assertNoSecret(output: string, keyFile: string): void {
  const keyBody = fs.readFileSync(keyFile, 'utf8').split('\n').filter((l) => l && !l.startsWith('-----'));
  for (const line of keyBody) assert.ok(!output.includes(line), 'a line of the client key is in the output');
  assert.ok(!output.includes(API_KEY), 'the API key is in the output');
}

const linesMatching = (output: string, pattern: RegExp) => output.split('\n').filter((l) => pattern.test(l));

describe('a secured Temporal (mTLS) from the standard configuration', () => {
  it('with the right client certificate: the worker polls, a cron trigger fires, a delivery is made', async (t) => {
    const certs = makeCertificates(t);
    const proxy = await startTlsProxy(t, { target: process.env.TEMPORAL_ADDRESS!, cert: certs.serverCert, key: certs.serverKey, ca: certs.caCert });
    const database = await createTestDatabase(t);
    const receiver = await startReceiver(t);
    const toml = path.join(certs.dir, 'temporal.toml');
    fs.writeFileSync(
      toml,
      [
        '[profile.secured]',
        `address = "${proxy.address}"`,
        `namespace = "${namespace}"`,
        '[profile.secured.tls]',
        `client_cert_path = "${certs.clientCert}"`,
        `client_key_path = "${certs.clientKey}"`,
        `server_ca_cert_path = "${certs.caCert}"`,
        'server_name = "localhost"',
        '',
      ].join('\n'),
    );
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const common = testEnv(database.url, { PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: base, LOG_LEVEL: 'info', RECONCILE_INTERVAL_MS: '500' });
    // The worker: the TOML profile alone (the runner's TEMPORAL_ADDRESS unset, so the profile's address is used).
    const worker = startProcess('worker/main.ts', { ...common, TEMPORAL_ADDRESS: '', TEMPORAL_NAMESPACE: '', TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'secured' });
    onCleanup(t, () => worker.stop('SIGKILL'));
    // The API: the standard variables alone, with an API key (sent as a bearer token; the dev server ignores it).
    const apiProcess = startProcess('api/server.ts', {
      ...common,
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
      TEMPORAL_TLS_SERVER_NAME: 'localhost',
      TEMPORAL_API_KEY: API_KEY,
      TEMPORAL_CONFIG_FILE: path.join(certs.dir, 'none.toml'),
    });
    onCleanup(t, () => apiProcess.stop('SIGKILL'));
    await waitForApi(base, apiProcess);

    const health = await api(base).get('/api/health/temporal');
    assert.equal(health.statusCode, 200, health.body);
    await waitFor('the worker to poll', async () => worker.output().includes('[worker] polling task queue'), 60_000);
    assert.match(worker.output(), new RegExp(`polling task queue on ${proxy.address} \\(namespace ${namespace}, mTLS \\(client certificate\\)\\)`));

    const user = await registerUser(base);
    const webhook = await api(base, user).post('/api/webhooks', { name: 'receiver', url: `${receiver.url}/hook`, events: ['trigger.fired'] });
    assert.equal(webhook.statusCode, 201, webhook.body);
    const trigger = await api(base, user).post('/api/user-triggers', { type: 'cron', name: 'every 2 s', configJson: { cronExpression: '*/2 * * * * *' } });
    assert.equal(trigger.statusCode, 201, trigger.body);
    const id = trigger.json<{ id: string }>().id;
    await waitFor('the cron trigger to fire', async () => (await api(base, user).get(`/api/user-triggers/${id}`)).json<{ fireCount: number }>().fireCount >= 1, 60_000).catch((err) => {
      throw new Error(`${err}\n--- worker ---\n${worker.output()}\n--- api ---\n${apiProcess.output()}`);
    });
    await waitFor('a delivery to the receiver', async () => receiver.requests.some((r) => r.body.includes(id)), 30_000);
    assert.ok(proxy.counts.accepted >= 2, 'both processes came through the proxy');
    assert.equal(proxy.counts.refused, 0);

    assert.equal(await apiProcess.stop('SIGTERM'), 0, apiProcess.output());
    assert.equal(await worker.stop('SIGTERM'), 0, worker.output());
    assertNoSecret(worker.output() + apiProcess.output(), certs.clientKey);
  });

  it('without a client certificate: one line says the TLS handshake was refused, /api/health/temporal answers 503 naming only Temporal', async (t) => {
    const certs = makeCertificates(t);
    const proxy = await startTlsProxy(t, { target: process.env.TEMPORAL_ADDRESS!, cert: certs.serverCert, key: certs.serverKey, ca: certs.caCert });
    const database = await createTestDatabase(t);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = testEnv(database.url, {
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      LOG_LEVEL: 'info',
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
      TEMPORAL_TLS_SERVER_NAME: 'localhost',
      TEMPORAL_API_KEY: API_KEY,
      TEMPORAL_CONFIG_FILE: path.join(certs.dir, 'none.toml'),
    });
    const worker = startProcess('worker/main.ts', env);
    onCleanup(t, () => worker.stop('SIGKILL'));
    const apiProcess = startProcess('api/server.ts', env);
    onCleanup(t, () => apiProcess.stop('SIGKILL'));
    await waitForApi(base, apiProcess);

    const refused = /refused the TLS handshake \(certificate required\)/;
    await waitFor('the worker to say the handshake was refused', async () => refused.test(worker.output()), 60_000);
    await waitFor('the API to say the handshake was refused', async () => refused.test(apiProcess.output()), 30_000).catch((err) => {
      throw new Error(`${err}\n--- api ---\n${apiProcess.output()}`);
    });
    const health = await api(base).get('/api/health/temporal');
    assert.equal(health.statusCode, 503);
    assert.equal(health.json().ok, false);
    // The cause and the address are the log's (above), not a stranger's (docs/api.md § Health).
    assert.deepEqual(health.json(), { ok: false, message: 'Temporal did not answer within 3 s' });
    // The worker keeps retrying (several handshakes refused), and says so once.
    await waitFor('several refused handshakes', async () => proxy.counts.refused >= 5, 30_000);
    await sleep(500);
    assert.equal(linesMatching(worker.output(), refused).length, 1, worker.output());
    assert.equal(linesMatching(apiProcess.output(), refused).length, 1, apiProcess.output());
    assert.ok(!/polling task queue/.test(worker.output()));

    assert.equal(await apiProcess.stop('SIGTERM'), 0, apiProcess.output());
    assert.equal(await worker.stop('SIGTERM'), 0, worker.output());
    assertNoSecret(worker.output() + apiProcess.output(), certs.clientKey);
  });
});
