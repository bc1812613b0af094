import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createConfiguredPool } from '../../db/pool';
import { loadConfig } from '../../lib/config';
import { suiteContext } from '../helpers/cleanup';
import { testEnv } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { makeCertificates, startPostgresTlsProxy } from '../helpers/postgres-tls-proxy';

/**
 * The pool over TLS for real: a TLS-terminating proxy in front of the test Postgres (whose own `ssl` is
 * off here), with certificates made by the test, and DATABASE_URL / PGSSL* as an operator sets them.
 */
describe('DATABASE_URL with sslmode, over TLS', () => {
  const suite = suiteContext();
  let database: TestDatabase;
  let certs: ReturnType<typeof makeCertificates>;
  let proxy: Awaited<ReturnType<typeof startPostgresTlsProxy>>;
  let misnamed: Awaited<ReturnType<typeof startPostgresTlsProxy>>;

  before(async () => {
    database = await createTestDatabase(suite, 1);
    certs = makeCertificates(suite);
    const upstream = new URL(database.url);
    const target = { host: upstream.hostname, port: Number(upstream.port || 5432) };
    proxy = await startPostgresTlsProxy(suite, target, certs.server);
    misnamed = await startPostgresTlsProxy(suite, target, certs.elsewhere);
  });

  /** Opens a pool as the API would with this environment, asks one query, and answers what happened. */
  async function connect(port: number, query: string, env: Record<string, string> = {}): Promise<string> {
    const url = new URL(database.url);
    url.host = `127.0.0.1:${port}`;
    const config = loadConfig(testEnv(`${url.toString()}${query}`, env));
    const pool = createConfiguredPool(config);
    try {
      const { rows } = await pool.query('SELECT current_database() AS name');
      assert.equal(rows[0].name, new URL(database.url).pathname.slice(1));
      return 'connected';
    } catch (err) {
      return `refused: ${(err as Error).message}`;
    } finally {
      await pool.end();
    }
  }

  it('verify-full with the right CA connects over TLS; with another CA it is refused', async () => {
    const before = proxy.stats.handshakes;
    assert.equal(await connect(proxy.port, `?sslmode=verify-full&sslrootcert=${certs.ca}`), 'connected');
    assert.equal(proxy.stats.handshakes, before + 1);
    assert.match(await connect(proxy.port, `?sslmode=verify-full&sslrootcert=${certs.otherCa}`), /refused: .*(self-signed|unable to verify|certificate)/i);
  });

  it('verify-ca checks the chain and not the name; verify-full checks both', async () => {
    assert.equal(await connect(misnamed.port, `?sslmode=verify-ca&sslrootcert=${certs.ca}`), 'connected');
    assert.match(await connect(misnamed.port, `?sslmode=verify-full&sslrootcert=${certs.ca}`), /refused: .*(altnames|does not match|Hostname)/i);
  });

  it('require encrypts without verifying (as libpq); PGSSLMODE and PGSSLROOTCERT apply when the URL names no sslmode', async () => {
    const before = proxy.stats.handshakes;
    assert.equal(await connect(proxy.port, ''), 'connected', 'no sslmode: plain');
    assert.equal(proxy.stats.handshakes, before);
    assert.equal(await connect(proxy.port, '?sslmode=require'), 'connected');
    assert.equal(proxy.stats.handshakes, before + 1);
    assert.equal(await connect(proxy.port, '', { PGSSLMODE: 'verify-full', PGSSLROOTCERT: certs.ca }), 'connected');
    assert.equal(proxy.stats.handshakes, before + 2);
    assert.match(await connect(proxy.port, '', { PGSSLMODE: 'verify-full', PGSSLROOTCERT: certs.otherCa }), /refused/);
    // The URL wins over the environment.
    assert.equal(await connect(proxy.port, '?sslmode=disable', { PGSSLMODE: 'verify-full', PGSSLROOTCERT: certs.otherCa }), 'connected');
  });
});
