import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

describe('Idempotency-Key', () => {
  const suite = suiteContext();
  let app: TestApp;

  before(async () => {
    ({ app } = await startTestApp(suite));
  });

  const create = (user: TestUser, key: string | undefined, payload: unknown) =>
    api(app, user).post('/api/agents', payload, key ? { 'idempotency-key': key } : {});
  const balanceOf = async (user: TestUser) => (await api(app, user).get('/api/account')).json().balance;
  const countAgents = async (user: TestUser) => (await api(app, user).get('/api/agents')).json().length;

  it('replays the first response for a retry and charges once', async () => {
    const user = await registerUser(app);
    const first = await create(user, 'create-1', { name: 'once' });
    const again = await create(user, 'create-1', { name: 'once' });
    assert.equal(first.statusCode, 201);
    assert.equal(again.statusCode, 201);
    assert.deepEqual(again.json(), first.json());
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(await balanceOf(user), 900);
    assert.equal(await countAgents(user), 1);
  });

  it('charges once when the same key is sent many times at once', async () => {
    const user = await registerUser(app);
    const results = await Promise.all(Array.from({ length: 10 }, () => create(user, 'burst', { name: 'burst' })));
    const created = results.filter((r) => r.statusCode === 201);
    assert.ok(created.length >= 1);
    assert.ok(results.every((r) => r.statusCode === 201 || r.statusCode === 409), results.map((r) => r.statusCode).join(','));
    assert.equal(new Set(created.map((r) => r.json().id)).size, 1, 'every 201 names the same agent');
    assert.equal(await countAgents(user), 1);
    assert.equal(await balanceOf(user), 900);
  });

  it('answers 422 for the same key with a different body', async () => {
    const user = await registerUser(app);
    await create(user, 'k', { name: 'one' });
    const res = await create(user, 'k', { name: 'two' });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(Object.keys(res.json()), ['message']);
    assert.equal(await countAgents(user), 1);
  });

  it('replays an error response too (402 stays 402), and keys are per caller', async () => {
    const user = await registerUser(app);
    for (let i = 0; i < 10; i++) await create(user, undefined, { name: `fill ${i}` });
    const short = await create(user, 'late', { name: 'late' });
    assert.equal(short.statusCode, 402);
    assert.equal((await create(user, 'late', { name: 'late' })).statusCode, 402);

    const other = await registerUser(app);
    const theirs = await create(other, 'late', { name: 'late' });
    assert.equal(theirs.statusCode, 201, 'another caller with the same key is a different request');
  });

  it('does not store a request that failed validation (as Stripe): the corrected retry with the same key runs', async () => {
    const user = await registerUser(app);
    assert.equal((await create(user, 'v', { name: '' })).statusCode, 400);
    assert.equal((await create(user, 'v', { name: '' })).statusCode, 400);
    const fixed = await create(user, 'v', { name: 'fixed' });
    assert.equal(fixed.statusCode, 201);
    assert.equal((await create(user, 'v', { name: 'fixed' })).json().id, fixed.json().id);
    assert.equal(await countAgents(user), 1);
  });

  it('without a key, two identical POSTs create two agents', async () => {
    const user = await registerUser(app);
    await create(user, undefined, { name: 'same' });
    await create(user, undefined, { name: 'same' });
    assert.equal(await countAgents(user), 2);
  });
});
