import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../api/app';
import { createTemporalClient } from '../../lib/temporal-client';
import { startTestApp, type TestApp } from '../helpers/app';
import { testConfig } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';

describe('health', () => {
  let app: TestApp;
  let close: () => Promise<void>;

  before(async () => {
    ({ app, close } = await startTestApp());
  });
  after(() => close());

  it('GET /api/health answers ok and a timestamp without auth', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/health' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().ok, true);
    assert.ok(!Number.isNaN(Date.parse(res.json().timestamp)));
  });

  it('GET /api/health/db answers ok against the real database', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/health/db' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { ok: true });
  });

  it('GET /api/health/temporal answers ok against the real dev server', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/health/temporal' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { ok: true });
  });

  it('answers 503 { ok: false } when Temporal or the database is unreachable', async () => {
    const database = await createTestDatabase();
    // Port 1 on loopback: nothing listens there.
    const config = testConfig(database.url, { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    const temporal = createTemporalClient(config);
    const broken = await buildApp({ config, db: database.db, temporal, logger: false });
    try {
      const t = await broken.inject({ method: 'GET', url: '/api/health/temporal' });
      assert.equal(t.statusCode, 503);
      assert.deepEqual(t.json(), { ok: false });
      await database.drop(); // ends the pool: the database is now unreachable for this app
      const d = await broken.inject({ method: 'GET', url: '/api/health/db' });
      assert.equal(d.statusCode, 503);
      assert.deepEqual(d.json(), { ok: false });
    } finally {
      await broken.close();
      await temporal.close();
    }
  });
});
