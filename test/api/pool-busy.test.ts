import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPool } from '../../db/pool';
import { api } from '../helpers/api';
import { registerUser, startTestApp } from '../helpers/app';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { createTestDatabase } from '../helpers/database';

/**
 * docs/api.md § Errors: a pool whose every connection is in use past DATABASE_CONNECT_TIMEOUT_MS is busy, not
 * down: 503 "busy, try again" with Retry-After, not "unavailable" (which an outage answers).
 */
describe('a busy pool', () => {
  const suite = suiteContext();

  it('answers 503 "The database is busy; try again in 2 s" with Retry-After: 2 while every connection is held, and serves again once one is free', async () => {
    const database = await createTestDatabase(suite);
    const small = createPool(database.url, 2, 300);
    onCleanup(suite, () => small.end());
    const { app } = await startTestApp(suite, {}, { ...database, db: small });
    const user = await registerUser(app);
    const held = [await small.connect(), await small.connect()];
    try {
      const res = await api(app, user).get('/api/agents');
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.headers['retry-after'], '2');
      assert.deepEqual(res.json(), { message: 'The database is busy; try again in 2 s' });
    } finally {
      for (const client of held) client.release();
    }
    assert.equal((await api(app, user).get('/api/agents')).statusCode, 200);
  });
});
