import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerUser, startTestApp, type TestApp } from '../helpers/app';

describe('balance under concurrent creations', () => {
  let app: TestApp;
  let close: () => Promise<void>;
  let db: Awaited<ReturnType<typeof startTestApp>>['db'];

  before(async () => {
    ({ app, close, db } = await startTestApp());
  });
  after(() => close());

  it('50 parallel creations with balance for 10: exactly 10 created, balance 0, ledger agrees', async () => {
    const user = await registerUser(app);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: `race ${i}` } })),
    );
    const codes = results.map((r) => r.statusCode);
    assert.equal(codes.filter((c) => c === 201).length, 10, `codes: ${codes.join(',')}`);
    assert.equal(codes.filter((c) => c === 402).length, 40);
    const account = (await app.inject({ method: 'GET', url: '/api/account', headers: user.auth })).json();
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
      Array.from({ length: 15 }, (_, i) => app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: `t${i}`, status: 'template' } })),
    );
    const results = await Promise.all(
      templates.map((t) => app.inject({ method: 'PATCH', url: `/api/agents/${t.json().id}`, headers: user.auth, payload: { status: 'active' } })),
    );
    assert.equal(results.filter((r) => r.statusCode === 200).length, 10);
    assert.equal(results.filter((r) => r.statusCode === 402).length, 5);
    assert.equal((await app.inject({ method: 'GET', url: '/api/account', headers: user.auth })).json().balance, 0);
  });
});
