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

  it('GET /api/health/ready answers ok when the database answers and has every migration', async () => {
    const res = await api(app).get('/api/health/ready');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { ok: true });
  });

  it('GET /api/health/ready answers 503 naming the migrations the database lacks; liveness stays 200', async (t) => {
    const { app: behind, database } = await startTestApp(t);
    await database.db.query('DELETE FROM migrations WHERE id IN (19, 20)');
    const res = await api(behind).get('/api/health/ready');
    assert.equal(res.statusCode, 503);
    assert.deepEqual(res.json(), { ok: false, message: 'The database lacks migrations 19, 20: run npm run migrate' });
    assert.equal((await api(behind).get('/api/health')).statusCode, 200);
  });

  it('answers 503 { ok: false, message } naming only the dependency when Temporal or the database is unreachable: no address, no driver error', async (t) => {
    // Port 1 on loopback: nothing listens there.
    const { app: broken, database } = await startTestApp(t, { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    const temporal = await api(broken).get('/api/health/temporal');
    assert.equal(temporal.statusCode, 503);
    assert.deepEqual(temporal.json(), { ok: false, message: 'Temporal did not answer within 3 s' });
    await database.drop(); // ends the pool: the database is now unreachable for this app
    for (const path of ['/api/health/db', '/api/health/ready']) {
      const d = await api(broken).get(path);
      assert.equal(d.statusCode, 503, path);
      assert.deepEqual(d.json(), { ok: false, message: 'Postgres did not answer within 3 s' }, path);
    }
    assert.equal((await api(broken).get('/api/health')).statusCode, 200);
  });
});
