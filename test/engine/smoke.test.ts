import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerUser } from '../helpers/app';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';

describe('smoke', () => {
  let h: EngineHarness;
  before(async () => {
    h = await startEngine(__filename);
  });
  after(() => h.close());

  it('cron fires', async () => {
    const user = await registerUser(h.app);
    const res = await h.app.inject({ method: 'POST', url: '/api/user-triggers', headers: user.auth, payload: { type: 'cron', name: 'c', configJson: { cronExpression: '*/2 * * * * *' } } });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id;
    const n = await waitFor('fires', async () => {
      const { rows } = await h.db.query('SELECT fire_count, next_fire_at FROM triggers WHERE id = $1', [id]);
      return rows[0].fire_count >= 2 && rows[0];
    }, 20_000);
    console.log(n, (await h.db.query('SELECT type, data, chain_depth FROM events')).rows, (await h.db.query('SELECT * FROM outbox')).rows);
  });
});
