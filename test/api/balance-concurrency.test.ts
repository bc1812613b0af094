import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

describe('balance under concurrent creations', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Awaited<ReturnType<typeof startTestApp>>['db'];

  before(async () => {
    ({ app, db } = await startTestApp(suite));
  });

  it('50 parallel creations with balance for 10: exactly 10 created, balance 0, ledger agrees', async () => {
    const user = await registerUser(app);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => api(app, user).post('/api/agents', { name: `race ${i}` })),
    );
    const codes = results.map((r) => r.statusCode);
    assert.equal(codes.filter((c) => c === 201).length, 10, `codes: ${codes.join(',')}`);
    assert.equal(codes.filter((c) => c === 402).length, 40);
    const account = (await api(app, user).get('/api/account')).json();
    assert.equal(account.balance, 0);
    const { rows } = await db.query(
      `SELECT (SELECT count(*) FROM agents WHERE account_id = $1)::int AS agents,
              (SELECT sum(amount) FROM account_transactions WHERE account_id = $1)::int AS ledger`,
      [account.id],
    );
    assert.deepEqual(rows[0], { agents: 10, ledger: 0 });
  });

  it('parallel template activations charge once each and never go negative', async () => {
    const user = await registerUser(app);
    const templates = await Promise.all(
      Array.from({ length: 15 }, (_, i) => api(app, user).post('/api/agents', { name: `t${i}`, status: 'template' })),
    );
    const results = await Promise.all(
      templates.map((t) => api(app, user).patch(`/api/agents/${t.json().id}`, { status: 'active' })),
    );
    assert.equal(results.filter((r) => r.statusCode === 200).length, 10);
    assert.equal(results.filter((r) => r.statusCode === 402).length, 5);
    assert.equal((await api(app, user).get('/api/account')).json().balance, 0);
  });
});
