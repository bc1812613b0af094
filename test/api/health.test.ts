import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { startTestApp, type TestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

describe('health', () => {
  const suite = suiteContext();
  let app: TestApp;

  before(async () => {
    ({ app } = await startTestApp(suite));
  });

  it('GET /api/health answers ok and a timestamp without auth', async () => {
    const res = await api(app).get('/api/health');
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().ok, true);
    assert.ok(!Number.isNaN(Date.parse(res.json().timestamp)));
  });

  it('GET /api/health/db answers ok against the real database', async () => {
    const res = await api(app).get('/api/health/db');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { ok: true });
  });

  it('GET /api/health/temporal answers ok against the real dev server', async () => {
    const res = await api(app).get('/api/health/temporal');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { ok: true });
  });

  it('answers 503 { ok: false } when Temporal or the database is unreachable', async (t) => {
    // Port 1 on loopback: nothing listens there.
    const { app: broken, database } = await startTestApp(t, { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    const temporal = await api(broken).get('/api/health/temporal');
    assert.equal(temporal.statusCode, 503);
    assert.deepEqual(temporal.json(), { ok: false });
    await database.drop(); // ends the pool: the database is now unreachable for this app
    const d = await api(broken).get('/api/health/db');
    assert.equal(d.statusCode, 503);
    assert.deepEqual(d.json(), { ok: false });
  });
});
