import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { createConfiguredPool } from '../../db/pool';
import { loadConfig } from '../../lib/config';

const valid = {
  DATABASE_URL: 'postgres://app:p%40ss@db.example:5433/agents',
  TEMPORAL_ADDRESS: '127.0.0.1:7233',
  JWT_SECRET: 'x'.repeat(32),
  SECRETS_KEY: Buffer.alloc(32).toString('base64'),
};

const dir = mkdtempSync(path.join(tmpdir(), 'database-url-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const ca = path.join(dir, 'ca.pem');
writeFileSync(ca, 'CA CERTIFICATE');
const cert = path.join(dir, 'client.pem');
writeFileSync(cert, 'CLIENT CERTIFICATE');
const key = path.join(dir, 'client.key');
writeFileSync(key, 'CLIENT KEY');

/** What pg will open each connection with, for this environment: its own parse of the configured URL (no connection is made). */
function connectionParameters(env: Record<string, string>): { host: string; port: number; user: string; password: string; database: string; ssl: unknown } {
  const config = loadConfig({ ...valid, ...env });
  const client = new pg.Client({ connectionString: config.databaseUrl });
  return (client as unknown as { connectionParameters: never }).connectionParameters;
}

function sslOf(env: Record<string, string>): false | Record<string, unknown> {
  const { ssl } = connectionParameters(env);
  if (ssl === false || ssl === undefined) return false;
  const { checkServerIdentity, ...rest } = ssl as Record<string, unknown>;
  // pg keeps the key as a property that is not enumerable (so that it is in no log of the options).
  const { key } = ssl as { key?: string };
  return { ...rest, ...(key ? { key } : {}), ...(checkServerIdentity ? { checksName: false } : {}) };
}

describe('DATABASE_URL, DATABASE_POOL_SIZE and the PGSSL* variables', () => {
  it('sizes the pool from DATABASE_POOL_SIZE (10 unless set, 1 to 1000)', async () => {
    assert.equal(loadConfig(valid).databasePoolSize, 10);
    const config = loadConfig({ ...valid, DATABASE_POOL_SIZE: '3' });
    const pool = createConfiguredPool(config);
    assert.equal(pool.options.max, 3);
    await pool.end();
    for (const bad of ['0', '1001', 'many']) assert.throws(() => loadConfig({ ...valid, DATABASE_POOL_SIZE: bad }), /DATABASE_POOL_SIZE/, bad);
  });

  it('keeps the URL\'s host, port, user, password and database; no TLS unless asked', () => {
    const p = connectionParameters({});
    assert.deepEqual([p.host, p.port, p.user, p.password, p.database], ['db.example', 5433, 'app', 'p@ss', 'agents']);
    assert.equal(sslOf({}), false);
    assert.equal(sslOf({ DATABASE_URL: `${valid.DATABASE_URL}?sslmode=disable` }), false);
  });

  it('reads sslmode= as libpq does: require encrypts without verifying, verify-ca checks the chain, verify-full the chain and the name', () => {
    const url = valid.DATABASE_URL;
    assert.deepEqual(sslOf({ DATABASE_URL: `${url}?sslmode=require` }), { rejectUnauthorized: false });
    assert.deepEqual(sslOf({ DATABASE_URL: `${url}?sslmode=prefer` }), { rejectUnauthorized: false });
    assert.deepEqual(sslOf({ DATABASE_URL: `${url}?sslmode=require&sslrootcert=${ca}` }), { ca: 'CA CERTIFICATE', checksName: false });
    assert.deepEqual(sslOf({ DATABASE_URL: `${url}?sslmode=verify-ca&sslrootcert=${ca}` }), { ca: 'CA CERTIFICATE', checksName: false });
    assert.deepEqual(sslOf({ DATABASE_URL: `${url}?sslmode=verify-full&sslrootcert=${ca}` }), { ca: 'CA CERTIFICATE' });
    assert.deepEqual(sslOf({ DATABASE_URL: `${url}?sslmode=verify-full` }), {});
  });

  it('takes PGSSLMODE, PGSSLROOTCERT, PGSSLCERT and PGSSLKEY where the URL names none (the URL wins, as in libpq)', () => {
    assert.deepEqual(sslOf({ PGSSLMODE: 'verify-full', PGSSLROOTCERT: ca, PGSSLCERT: cert, PGSSLKEY: key }), {
      ca: 'CA CERTIFICATE',
      cert: 'CLIENT CERTIFICATE',
      key: 'CLIENT KEY',
    });
    assert.deepEqual(sslOf({ PGSSLMODE: 'require' }), { rejectUnauthorized: false });
    assert.equal(sslOf({ DATABASE_URL: `${valid.DATABASE_URL}?sslmode=disable`, PGSSLMODE: 'verify-full' }), false);
    assert.deepEqual(sslOf({ DATABASE_URL: `${valid.DATABASE_URL}?sslmode=require`, PGSSLMODE: 'verify-full', PGSSLROOTCERT: ca }), { ca: 'CA CERTIFICATE', checksName: false });
  });

  it('refuses at start-up, in one line naming the variable and never the password: an unknown mode, verify-ca without a root certificate, an unreadable file', () => {
    assert.throws(() => loadConfig({ ...valid, PGSSLMODE: 'allow' }), /PGSSLMODE: must be one of disable, prefer, require, verify-ca, verify-full/);
    const refused = (env: Record<string, string>, pattern: RegExp) =>
      assert.throws(
        () => loadConfig({ ...valid, ...env }),
        (err: Error) => pattern.test(err.message) && !err.message.includes('p%40ss') && !err.message.includes('p@ss') && err.message.split('\n').length === 2,
      );
    refused({ DATABASE_URL: `${valid.DATABASE_URL}?sslmode=allow` }, /DATABASE_URL: sslmode must be one of disable, prefer, require, verify-ca, verify-full \(not "allow"\)/);
    refused({ PGSSLMODE: 'verify-ca' }, /Using sslmode=verify-ca requires specifying a CA with sslrootcert/);
    refused({ PGSSLMODE: 'verify-full', PGSSLROOTCERT: path.join(dir, 'missing.pem') }, /PGSSLROOTCERT.*ENOENT/);
  });
});
