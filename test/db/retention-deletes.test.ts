import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deleteInBatches, RETENTION_BATCH, retentionBatches, retentionCutoffs } from '../../activities/retention';
import { createRetentionRepository } from '../../db/repositories/retention';
import { createScheduleHistoryRepository } from '../../db/repositories/schedule-history';
import { RETENTION_STEPS } from '../../lib/retention';
import { api } from '../helpers/api';
import { registerUser, startTestApp } from '../helpers/app';
import type { Cleanup } from '../helpers/cleanup';
import { createTestDatabase } from '../helpers/database';
import { seedRetentionRows } from '../helpers/retention-rows';

/** Each delete of db/repositories/retention.ts on a real Postgres (a fresh database per test). */
describe('retention deletes', () => {
  async function freshDatabase(t: Cleanup) {
    const database = await createTestDatabase(t);
    const repo = createRetentionRepository(database.db);
    /** 30 days of history, as of the database's clock now. */
    const cutoffs = async () => retentionCutoffs(await repo.now(), 30);
    return { db: database.db, repo, cutoffs };
  }

  it('each delete takes exactly its expired rows, and nothing else', async (t) => {
    const { db, repo, cutoffs } = await freshDatabase(t);
    const seed = await seedRetentionRows(db, 30);
    const c = await cutoffs();
    const deletes: [string, () => Promise<number>, string[]][] = [
      ['finished deliveries older than 30 days, with their attempts', () => repo.deleteFinishedDeliveries(c.history, 100, 1000), [
        'old succeeded delivery', 'old succeeded delivery attempt 1', 'old succeeded delivery attempt 2',
        'old failed delivery', 'old failed delivery attempt 1', 'old failed delivery attempt 2', 'old failed delivery attempt 3',
        'old cancelled delivery',
      ]],
      ['fires older than 30 days', () => repo.deleteFires(c.history, 100), ['old fire']],
      ['finished runs older than 30 days', () => repo.deleteFinishedRuns(c.history, 100), ['old succeeded run', 'old failed run']],
      ['events older than 30 days without deliveries', () => repo.deleteUndeliveredEvents(c.history, 100), [
        'event of old succeeded delivery', 'event of old failed delivery', 'event of old cancelled delivery', 'old event',
      ]],
      ['hook receipts older than 30 days', () => repo.deleteHookReceipts(c.history, 100), ['old hook receipt']],
      ['idempotency records older than 24 h', () => repo.deleteIdempotencyKeys(c.idempotency, 100), ['idempotency key of 25 h']],
      ['rate-limit counters whose window ended', () => repo.deleteEndedRateLimits(c.now, 100), ['ended rate limit']],
      ['expired and revoked refresh tokens', () => repo.deleteDeadRefreshTokens(c.now, 100), ['expired refresh token', 'revoked refresh token']],
      ['missed fires recorded more than 30 days ago', () => repo.deleteMissedFires(c.history, 100), ['old missed fire']],
      ['schedule corrections older than 30 days', () => repo.deleteScheduleCorrections(c.history, 100), ['old schedule correction']],
      ['finished recoveries older than 30 days, with their items', () => repo.deleteFinishedRecoveries(c.history, 100, 1000), [
        'old completed recovery', 'old completed recovery item', 'old failed recovery',
      ]],
      ['thread messages older than 30 days and than their memory', () => repo.deleteOldThreadMessages(c.history, c.now, 100), [
        'old thread message', 'thread message older than a long memory',
      ]],
      ['schedule versions that ended more than 30 days ago', () => repo.deleteEndedScheduleVersions(c.history, 100), ['schedule version ended before the horizon']],
    ];
    let expected = await seed.present();
    for (const [what, remove, names] of deletes) {
      const rowsOfTable = names.filter((n) => !/( attempt \d| item)$/.test(n)).length;
      assert.equal(await remove(), rowsOfTable, `${what}: rows deleted`);
      expected = expected.filter((name) => !names.includes(name));
      assert.deepEqual(await seed.present(), expected, `${what}: what is left`);
      assert.equal(await remove(), 0, `${what}: nothing more`);
    }
    assert.deepEqual(expected, seed.kept);
    assert.deepEqual(await seed.youngFireLinks(), { run_id: null, event_id: null }, 'a young fire loses its links to a deleted run and event');
  });

  it('an event with a pending delivery stays, and goes once the delivery has finished and gone', async (t) => {
    const { db, repo, cutoffs } = await freshDatabase(t);
    const seed = await seedRetentionRows(db, 30);
    const c = await cutoffs();
    await repo.deleteFinishedDeliveries(c.history, 100, 1000);
    await repo.deleteUndeliveredEvents(c.history, 100);
    assert.deepEqual(await seed.present(['old pending delivery', 'event of old pending delivery']), ['old pending delivery', 'event of old pending delivery']);

    await db.query(`UPDATE deliveries SET status = 'failed' WHERE id = $1`, [seed.key('old pending delivery')]);
    assert.equal(await repo.deleteFinishedDeliveries(c.history, 100, 1000), 1);
    assert.equal(await repo.deleteUndeliveredEvents(c.history, 100), 1);
    assert.deepEqual(await seed.present(['old pending delivery', 'event of old pending delivery']), []);
  });

  it('a batch takes at most its size, oldest first', async (t) => {
    const { db, repo, cutoffs } = await freshDatabase(t);
    const seed = await seedRetentionRows(db, 30);
    const c = await cutoffs();
    // Two more old fires, older than the seeded one.
    const { rows: older } = await db.query<{ id: string }>(
      `INSERT INTO fires (account_id, trigger_id, fire_key, source, status, created_at)
       SELECT account_id, trigger_id, 'manual-older-' || n, 'manual', 'fired', now() - make_interval(days => 40 + n)
       FROM fires, generate_series(1, 2) AS n WHERE id = $1
       RETURNING id`,
      [seed.key('old fire')],
    );
    assert.equal(await repo.deleteFires(c.history, 2), 2);
    const left = await db.query(`SELECT id FROM fires WHERE id = ANY($1)`, [older.map((r) => r.id)]);
    assert.equal(left.rowCount, 0, 'the two oldest went first');
    assert.deepEqual(await seed.present(['old fire']), ['old fire']);
    assert.equal(await repo.deleteFires(c.history, 2), 1);
  });

  it("a delivery batch stops when its deliveries' attempts reach the bound, and takes at least one delivery", async (t) => {
    const { db, repo, cutoffs } = await freshDatabase(t);
    const seed = await seedRetentionRows(db, 30);
    const c = await cutoffs();
    // Old finished deliveries, oldest first: cancelled (0 attempts), succeeded (2), failed (3).
    await db.query(`UPDATE deliveries SET created_at = created_at - interval '2 days' WHERE id = $1`, [seed.key('old cancelled delivery')]);
    await db.query(`UPDATE deliveries SET created_at = created_at - interval '1 day' WHERE id = $1`, [seed.key('old succeeded delivery')]);
    // Bound 1: the cancelled one (0 before it) and the succeeded one (0 before it); the failed one has 2 before it.
    assert.equal(await repo.deleteFinishedDeliveries(c.history, 100, 1), 2);
    assert.deepEqual(await seed.present(['old cancelled delivery', 'old succeeded delivery', 'old failed delivery']), ['old failed delivery']);
    // Its 3 attempts exceed the bound, but a batch always takes its first delivery.
    assert.equal(await repo.deleteFinishedDeliveries(c.history, 100, 1), 1);
    assert.deepEqual(await seed.present(['old failed delivery attempt 3']), []);
  });

  it('a row a request holds is skipped, not waited for, and goes in a later batch', async (t) => {
    const { db, repo, cutoffs } = await freshDatabase(t);
    const seed = await seedRetentionRows(db, 30);
    const c = await cutoffs();
    const holder = await db.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM runs WHERE id = $1 FOR UPDATE`, [seed.key('old succeeded run')]);
      const deleting = repo.deleteFinishedRuns(c.history, 100);
      const first = await Promise.race([deleting, new Promise((resolve) => setTimeout(resolve, 2_000, 'waited for the lock'))]);
      await holder.query('COMMIT');
      await deleting;
      assert.equal(first, 1, 'only the run nobody holds, at once');
    } finally {
      holder.release();
    }
    assert.equal(await repo.deleteFinishedRuns(c.history, 100), 1);
    assert.deepEqual(await seed.present(['old succeeded run', 'old failed run']), []);
  });

  it('batches repeat until one deletes nothing, or the time budget is spent', async (t) => {
    const { db, repo, cutoffs } = await freshDatabase(t);
    await seedRetentionRows(db, 30);
    await seedRetentionRows(db, 30);
    const small = { ...RETENTION_BATCH, rows: 2, runs: 1 };
    const batches = retentionBatches(repo, await cutoffs(), small);
    assert.deepEqual(Object.keys(batches).sort(), [...RETENTION_STEPS].sort(), 'a batch for every step');

    const seen: number[] = [];
    const runs = await deleteInBatches(batches.runs, { budgetMs: 60_000, afterBatch: (n) => seen.push(n) });
    assert.deepEqual(runs, { deleted: 4, done: true });
    assert.deepEqual(seen, [1, 2, 3, 4, 4], 'one run per batch, then an empty batch');

    const first = await deleteInBatches(batches.deliveries, { budgetMs: 0 });
    assert.deepEqual(first, { deleted: 2, done: false }, 'no budget left after the first batch');
    assert.deepEqual(await deleteInBatches(batches.deliveries, { budgetMs: 60_000, deleted: 2 }), { deleted: 6, done: true });
  });

  it('the database ends a schedule version when it records the next; retention keeps the one in force at the horizon', async (t) => {
    const { db, repo, cutoffs } = await freshDatabase(t);
    const seed = await seedRetentionRows(db, 30);
    const { rows: owner } = await db.query<{ account_id: string }>(`SELECT account_id FROM delivery_recoveries WHERE id = $1`, [seed.key('old completed recovery')]);
    const { rows: created } = await db.query<{ id: string }>(
      `INSERT INTO triggers (account_id, scope, type, name, config_json) VALUES ($1, 'user', 'cron', 'c', $2) RETURNING id`,
      [owner[0]!.account_id, { cronExpression: '0 * * * *', timezone: 'UTC' }],
    );
    const triggerId = created[0]!.id;
    await db.query(`UPDATE triggers SET enabled = false WHERE id = $1`, [triggerId]);
    await db.query(`UPDATE triggers SET name = 'renamed' WHERE id = $1`, [triggerId]); // not a new version
    await db.query(`UPDATE triggers SET enabled = true WHERE id = $1`, [triggerId]);
    const versions = async () =>
      (await db.query<{ id: string; enabled: boolean; valid_from: Date; valid_until: Date | null }>(
        `SELECT id, enabled, valid_from, valid_until FROM trigger_schedule_history WHERE trigger_id = $1 ORDER BY valid_from, id`,
        [triggerId],
      )).rows;
    const written = await versions();
    assert.deepEqual(written.map((v) => v.enabled), [true, false, true]);
    assert.deepEqual(written.map((v) => v.valid_until), [written[1]!.valid_from, written[2]!.valid_from, null], 'each ends as the next begins');

    // All three began more than 30 days ago: the first two ended before the horizon, the last is in force.
    await db.query(
      `UPDATE trigger_schedule_history SET valid_from = valid_from - interval '40 days', valid_until = valid_until - interval '40 days' WHERE trigger_id = $1`,
      [triggerId],
    );
    const c = await cutoffs();
    assert.equal(await repo.deleteEndedScheduleVersions(c.history, 100), 3, 'two of this trigger, one seeded');
    assert.deepEqual((await versions()).map((v) => v.id), [written[2]!.id]);
    // What expected fires read from the horizon on is unchanged: the version in force.
    const history = createScheduleHistoryRepository(db);
    assert.deepEqual((await history.versions([triggerId], c.history, c.now)).map((v) => v.enabled), [true]);
    assert.deepEqual((await history.firstVersions([triggerId])).map((v) => v.enabled), [true]);
    assert.equal(await repo.deleteEndedScheduleVersions(c.history, 100), 0);
  });

  it('a recovery batch stops when the items of its recoveries reach the bound, and takes at least one recovery', async (t) => {
    const { db, repo, cutoffs } = await freshDatabase(t);
    const seed = await seedRetentionRows(db, 30);
    const c = await cutoffs();
    // Oldest first: the completed recovery (3 items), then the failed one (0 items).
    await db.query(`UPDATE delivery_recoveries SET created_at = created_at - interval '1 day', attempted = 3 WHERE id = $1`, [seed.key('old completed recovery')]);
    assert.equal(await repo.deleteFinishedRecoveries(c.history, 100, 1), 1, 'its 3 items exceed the bound, but a batch takes its first recovery');
    assert.deepEqual(await seed.present(['old completed recovery', 'old completed recovery item', 'old failed recovery']), ['old failed recovery']);
    assert.equal(await repo.deleteFinishedRecoveries(c.history, 100, 1), 1);
    assert.deepEqual(await seed.present(['old failed recovery', 'old running recovery']), ['old running recovery']);
  });

  it('reuse of a rotated refresh token is still detected after retention; a revoked family answers alike once deleted', async (t) => {
    const { app, db } = await startTestApp(t);
    const repo = createRetentionRepository(db);
    const user = await registerUser(app);
    const refresh = (refreshToken: string) => api(app).post('/api/auth/refresh', { refreshToken });

    const rotated = await refresh(user.refreshToken);
    assert.equal(rotated.statusCode, 200);
    const successor = rotated.json().refreshToken as string;
    assert.equal(await repo.deleteDeadRefreshTokens(await repo.now(), 100), 0, 'a rotated token that has not expired is kept');

    const reused = await refresh(user.refreshToken);
    assert.equal(reused.statusCode, 401);
    assert.match(reused.json().message, /already used/);
    const revoked = await refresh(successor);
    assert.equal(revoked.statusCode, 401, 'reuse revoked the family');

    assert.equal(await repo.deleteDeadRefreshTokens(await repo.now(), 100), 2, 'the revoked family goes');
    for (const token of [user.refreshToken, successor]) {
      const res = await refresh(token);
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), revoked.json(), 'same answer as before it was deleted');
    }
  });

  it("an account's days of use go USAGE_RETENTION_DAYS after their day, oldest first; today's and the younger days stay", async (t) => {
    const { db, repo } = await freshDatabase(t);
    const { rows } = await db.query<{ id: string }>(
      `WITH u AS (INSERT INTO users (email, password_hash) VALUES (gen_random_uuid()::text || '@example.com', 'x') RETURNING id)
       INSERT INTO accounts (owner_user_id, name, balance) SELECT id, 'usage', 0 FROM u RETURNING id`,
    );
    const accountId = rows[0]!.id;
    // Days 402, 401 and 399 days ago, and today (UTC days, as the usage is counted).
    for (const ago of [402, 401, 399, 0]) {
      await db.query(
        `INSERT INTO account_usage_days (account_id, day, runs, prompt_tokens) VALUES ($1, (now() AT TIME ZONE 'UTC')::date - $2::int, 1, 10)`,
        [accountId, ago],
      );
    }
    const daysLeft = async () =>
      (await db.query<{ ago: number }>(`SELECT (now() AT TIME ZONE 'UTC')::date - day AS ago FROM account_usage_days WHERE account_id = $1 ORDER BY day`, [accountId])).rows.map((r) => r.ago);
    const cutoffs = retentionCutoffs(await repo.now(), 30, 400);
    const batches = retentionBatches(repo, cutoffs, { ...RETENTION_BATCH, rows: 1 });
    assert.equal(await batches.usage_days(), 1, 'a batch of one');
    assert.deepEqual(await daysLeft(), [401, 399, 0], 'the oldest day first');
    assert.equal(await batches.usage_days(), 1);
    assert.equal(await batches.usage_days(), 0, 'nothing more');
    assert.deepEqual(await daysLeft(), [399, 0]);
    assert.equal(await repo.deleteOldUsageDays(await repo.now(), 100), 1, 'with no days kept, every day before today goes');
    assert.deepEqual(await daysLeft(), [0], "today's, which the model budget reads, never");
  });
});
