import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { withTransaction, type Db } from '../../db/pool';
import { afterCommit, WriteUnit } from '../../db/write-unit';
import { suiteContext } from '../helpers/cleanup';
import { createTestDatabase } from '../helpers/database';

/** The write unit (db/write-unit.ts) on its own, on a real database; its hand-off to Temporal in test/engine/handoff-after-commit.test.ts. */
describe('write unit', () => {
  const suite = suiteContext();
  let db: Db;
  
  before(async () => {
    ({ db } = await createTestDatabase(suite, 3));
    await db.query('CREATE TABLE unit_probe (n int PRIMARY KEY)');
  });

  const probe = async () => (await db.query<{ n: number }>('SELECT n FROM unit_probe ORDER BY n')).rows.map((r) => r.n);
  const pid = async () => (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

  it("runs the pool's queries and transactions on its one connection, committed together", async () => {
    await db.query('TRUNCATE unit_probe');
    const unit = await WriteUnit.begin(db);
    await unit.run(async () => {
      const own = await pid();
      await db.query('INSERT INTO unit_probe VALUES (1)');
      await withTransaction(db, async (tx) => {
        await tx.query('INSERT INTO unit_probe VALUES (2)');
        assert.equal(await pid(), own);
      });
      await assert.rejects(db.connect(), /second connection/);
    });
    assert.deepEqual(await probe(), [], 'nothing visible before the commit');
    await unit.commit();
    assert.deepEqual(await probe(), [1, 2]);
  });

  it('undoes a nested transaction alone, also one whose failed statement was swallowed (as COMMIT would)', async () => {
    await db.query('TRUNCATE unit_probe');
    const unit = await WriteUnit.begin(db);
    await unit.run(async () => {
      await db.query('INSERT INTO unit_probe VALUES (1)');
      await assert.rejects(
        withTransaction(db, async (tx) => {
          await tx.query('INSERT INTO unit_probe VALUES (2)');
          throw new Error('refused');
        }),
        /refused/,
      );
      const swallowed = await withTransaction(db, async (tx) => {
        await tx.query('INSERT INTO unit_probe VALUES (3)');
        return tx.query('INSERT INTO unit_probe VALUES (1)').then(
          () => 'inserted',
          () => 'duplicate',
        );
      });
      assert.equal(swallowed, 'duplicate');
      await db.query('INSERT INTO unit_probe VALUES (4)');
    });
    await unit.commit();
    assert.deepEqual(await probe(), [1, 4]);
  });

  it('runs after-commit effects once committed, outside the unit; drops them on rollback', async () => {
    await db.query('TRUNCATE unit_probe');
    const ran: string[] = [];
    const committed = await WriteUnit.begin(db);
    await committed.run(async () => {
      await db.query('INSERT INTO unit_probe VALUES (1)');
      afterCommit(() => {
        ran.push('committed');
        // Outside the unit: on another connection, which sees the committed row.
        void db.query('SELECT count(*)::int AS n FROM unit_probe').then(({ rows }) => ran.push(`saw ${rows[0].n}`));
      });
    });
    assert.deepEqual(ran.slice(), []);
    await committed.commit();
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(ran.slice(), ['committed', 'saw 1']);

    const rolledBack = await WriteUnit.begin(db);
    rolledBack.run(() => afterCommit(() => ran.push('rolled back')));
    await rolledBack.rollback();
    afterCommit(() => ran.push('outside'));
    assert.deepEqual(ran.slice(), ['committed', 'saw 1', 'outside']);
  });

  it('refuses a query after its unit has ended rather than running it outside the transaction', async () => {
    const unit = await WriteUnit.begin(db);
    const late = unit.run(async () => {
      await new Promise((r) => setTimeout(r, 50));
      return db.query('INSERT INTO unit_probe VALUES (99)');
    });
    await unit.rollback();
    await assert.rejects(late, /after its request had ended/);
    assert.ok(!(await probe()).includes(99));
  });
});

/** A plain transaction (outside any unit) whose connection dies fails its caller, and the process lives on. */
describe('withTransaction on a lost connection', () => {
  const suite = suiteContext();
  let db: Db;

  before(async () => {
    ({ db } = await createTestDatabase(suite, 3));
  });

  it('rejects with the connection error instead of crashing the process, and the pool serves the next query', { timeout: 30_000 }, async () => {
    const outcome = withTransaction(db, async (tx) => {
      const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await db.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await new Promise((r) => setTimeout(r, 200)); // the 'error' event arrives while the client is idle
      await tx.query('SELECT 1');
    });
    await assert.rejects(outcome);
    assert.equal((await db.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one, 1);
  });
});
