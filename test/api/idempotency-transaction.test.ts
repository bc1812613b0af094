import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { createTestDatabase } from '../helpers/database';
import { waitFor } from '../helpers/processes';

/**
 * The idempotency record is written in the same transaction as the change it records: the claim, the
 * work and the stored response commit together or not at all.
 */
describe('Idempotency-Key: the record and the change are one transaction', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;

  before(async () => {
    ({ app, db } = await startTestApp(suite, { FIRES_PER_MINUTE: '2' }));
  });

  const post = (user: TestUser, url: string, key: string, payload: object) => api(app, user).post(url, payload, { 'idempotency-key': key });
  const create = (user: TestUser, key: string, payload: object) => post(user, '/api/agents', key, payload);
  const accountIdOf = async (user: TestUser): Promise<string> => (await api(app, user).get('/api/account')).json().id;

  /** Everything an agent creation writes for the user, and the user's idempotency records. */
  async function stateOf(user: TestUser) {
    const { rows } = await db.query(
      `SELECT (SELECT balance FROM accounts WHERE id = $1) AS balance,
              (SELECT count(*) FROM agents WHERE account_id = $1)::int AS agents,
              (SELECT count(*) FROM account_transactions WHERE account_id = $1)::int AS ledger,
              (SELECT count(*) FROM events WHERE account_id = $1)::int AS events,
              (SELECT count(*) FROM idempotency_keys WHERE caller_id = $2)::int AS records`,
      [await accountIdOf(user), user.id],
    );
    return rows[0] as { balance: number; agents: number; ledger: number; events: number; records: number };
  }

  /**
   * Holds the account's row while `fn` runs, so that the user's agent creation waits inside its
   * transaction; `waiting` resolves to the backend pid of the request once it waits there.
   */
  async function whileAccountHeld<T>(user: TestUser, fn: (waiting: () => Promise<number>) => Promise<T>): Promise<T> {
    const holder = await db.connect();
    try {
      await holder.query('BEGIN');
      const { rows: me } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await holder.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [await accountIdOf(user)]);
      const waiting = () =>
        waitFor('a request to wait on the held account', async () => {
          const { rows } = await db.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
            [me[0]!.pid],
          );
          return rows[0]?.pid;
        }, 10_000);
      return await fn(waiting);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
  }

  it('a failure storing the response rolls the change back too: nothing kept, the key free to retry', async () => {
    const user = await registerUser(app);
    const before = await stateOf(user);
    // Postgres refuses to store a 201: the failure falls after the agent, its charge and its event were written.
    await db.query(`ALTER TABLE idempotency_keys ADD CONSTRAINT refuse_created CHECK (status_code IS DISTINCT FROM 201)`);
    let failed;
    try {
      failed = await create(user, 'crash', { name: 'crash' });
    } finally {
      await db.query(`ALTER TABLE idempotency_keys DROP CONSTRAINT refuse_created`);
    }
    assert.equal(failed.statusCode, 500);
    assert.deepEqual(failed.json(), { message: 'Internal server error' });
    assert.deepEqual(await stateOf(user), before, 'no agent, no charge, no event, no record');

    const retry = await create(user, 'crash', { name: 'crash' });
    assert.equal(retry.statusCode, 201, retry.body);
    const replay = await create(user, 'crash', { name: 'crash' });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), retry.json());
    assert.deepEqual(await stateOf(user), { ...before, balance: before.balance - 100, agents: 1, ledger: before.ledger + 1, events: 1, records: 1 });
  });

  it('a connection lost in the middle of the work leaves nothing (503, an outage), and the key free', { timeout: 30_000 }, async () => {
    const user = await registerUser(app);
    const before = await stateOf(user);
    const { pending } = await whileAccountHeld(user, async (waiting) => {
      const pending = create(user, 'lost', { name: 'lost' });
      await db.query('SELECT pg_terminate_backend($1)', [await waiting()]);
      return { pending };
    });
    const lost = await pending;
    // A connection ended by the server (57P01, as a restart does) is an outage: 503 with Retry-After, never a 500.
    assert.equal(lost.statusCode, 503, lost.body);
    assert.ok(lost.headers['retry-after'], 'Retry-After');
    assert.deepEqual(await stateOf(user), before);
    assert.equal((await create(user, 'lost', { name: 'lost' })).statusCode, 201);
  });

  it('the same key while the first request runs: 409 at once, then the replay; charged once', { timeout: 30_000 }, async () => {
    const user = await registerUser(app);
    const before = await stateOf(user);
    const { pending } = await whileAccountHeld(user, async (waiting) => {
      const pending = create(user, 'slow', { name: 'slow' });
      await waiting();
      const second = await create(user, 'slow', { name: 'slow' });
      assert.equal(second.statusCode, 409, second.body);
      assert.deepEqual(second.json(), { message: 'A request with this Idempotency-Key is still in progress' });
      // Its body unseen yet, a different request with the key is "in progress" too; 422 once it has ended.
      assert.equal((await create(user, 'slow', { name: 'other' })).statusCode, 409);
      return { pending };
    });
    const first = await pending;
    assert.equal(first.statusCode, 201, first.body);
    const replay = await create(user, 'slow', { name: 'slow' });
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), first.json());
    assert.equal((await create(user, 'slow', { name: 'other' })).statusCode, 422);
    assert.deepEqual(await stateOf(user), { ...before, balance: before.balance - 100, agents: 1, ledger: before.ledger + 1, events: 1, records: 1 });
  });

  it('an error answer is stored with its work undone, even after a failed statement (a duplicate invite)', async () => {
    const user = await registerUser(app);
    const invite = { email: 'twice@example.com', role: 'viewer' };
    assert.equal((await post(user, '/api/team', 'invite-1', invite)).statusCode, 201);
    const duplicate = await post(user, '/api/team', 'invite-2', invite);
    assert.equal(duplicate.statusCode, 409, duplicate.body);
    const replay = await post(user, '/api/team', 'invite-2', invite);
    assert.equal(replay.statusCode, 409);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), duplicate.json());
  });

  it('keeps FIRES_PER_MINUTE exact: a replayed fire is not counted again, a 429 is neither counted nor stored', async () => {
    const user = await registerUser(app);
    const trigger = (await post(user, '/api/user-triggers', 'trigger', { type: 'webhook', name: 'fired' })).json();
    const fire = (key: string) => post(user, `/api/user-triggers/${trigger.id}/fire`, key, {});
    const one = await fire('fire-1');
    assert.equal(one.statusCode, 202, one.body);
    assert.equal((await fire('fire-2')).statusCode, 202);
    assert.equal((await fire('fire-3')).statusCode, 429);
    const again = await fire('fire-1');
    assert.equal(again.statusCode, 202);
    assert.deepEqual(again.json(), one.json());
    assert.equal((await fire('fire-3')).statusCode, 429);
    const { rows } = await db.query(
      `SELECT (SELECT fires FROM account_fire_windows WHERE account_id = $1) AS counted,
              (SELECT count(*) FROM idempotency_keys WHERE caller_id = $2 AND key LIKE 'fire-%')::int AS records`,
      [await accountIdOf(user), user.id],
    );
    assert.deepEqual(rows[0], { counted: 2, records: 2 });
  });

  it('hands the outbox rows of an idempotent request to Temporal once it has committed', async () => {
    const user = await registerUser(app);
    assert.equal((await create(user, 'handed', { name: 'handed' })).statusCode, 201);
    const accountId = await accountIdOf(user);
    await waitFor('the agent.created dispatch to leave the outbox', async () => {
      const { rows } = await db.query(`SELECT 1 FROM outbox WHERE payload -> 'tags' ->> 'accountId' = $1`, [accountId]);
      return rows.length === 0;
    }, 10_000);
  });
});

describe('Idempotency-Key under a burst, with a pool of 2 connections', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;

  before(async () => {
    ({ app, db } = await startTestApp(suite, {}, await createTestDatabase(suite, 2)));
  });

  it('50 concurrent idempotent creations (10 repeating a key) all finish: each request holds one connection', { timeout: 60_000 }, async () => {
    const user = await registerUser(app);
    const keys = [...Array.from({ length: 40 }, (_, i) => `k${i}`), ...Array.from({ length: 10 }, (_, i) => `k${i}`)];
    const results = await Promise.all(
      keys.map((key) => api(app, user).post('/api/agents', { name: key, status: 'template' }, { 'idempotency-key': key })),
    );
    const codes = results.map((r) => r.statusCode);
    assert.ok(codes.every((c) => c === 201 || c === 409), codes.join(','));
    const ids = new Map<string, string>();
    results.forEach((r, i) => {
      if (r.statusCode !== 201) return;
      const id = r.json().id as string;
      assert.equal(ids.get(keys[i]!) ?? id, id, `every 201 for ${keys[i]} names one agent`);
      ids.set(keys[i]!, id);
    });
    assert.equal(ids.size, 40, 'each key created its agent');
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM agents WHERE name LIKE 'k%'`);
    assert.equal(rows[0].n, 40);
  });
});
