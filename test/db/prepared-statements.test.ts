import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withTransaction } from '../../db/pool';
import { createTestDatabase } from '../helpers/database';

/** db/pool.ts: statements with parameters run prepared on their connection, and survive a migration. */
describe('prepared statements', () => {
  /** The prepared statements of the connection `tx` holds, by text. */
  async function prepared(tx: { query: (text: string) => Promise<{ rows: { name: string; statement: string }[] }> }) {
    const { rows } = await tx.query(`SELECT name, statement FROM pg_prepared_statements`);
    return new Map(rows.map((r) => [r.statement, r.name]));
  }

  it('a statement with parameters is prepared once per connection and reused; one without is not', async (t) => {
    const { db } = await createTestDatabase(t, 1);
    const text = `SELECT $1::int + 1 AS n`;
    await withTransaction(db, async (tx) => {
      assert.equal((await tx.query<{ n: number }>(text, [41])).rows[0]!.n, 42);
      assert.equal((await tx.query<{ n: number }>(text, [1])).rows[0]!.n, 2);
      const names = await prepared(tx);
      assert.ok(names.get(text), `"${text}" was not prepared: ${JSON.stringify([...names])}`);
      // Named by its first keyword, which a trace's query span shows (pg.query:select_…).
      assert.match(names.get(text)!, /^select_\d+_\d+$/);
      assert.ok(![...names.keys()].some((s) => s.includes('pg_prepared_statements')), 'a statement without parameters was prepared');
    });
    // Through the pool too (the same one connection), under the same name.
    assert.equal((await db.query<{ n: number }>(text, [2])).rows[0]!.n, 3);
    await withTransaction(db, async (tx) => assert.equal((await prepared(tx)).size, 1));
  });

  it('after a migration changes what a prepared statement returns, it fails once and is prepared again', async (t) => {
    const { db } = await createTestDatabase(t, 1);
    await db.query(`CREATE TABLE prep_probe (a int)`);
    await db.query(`INSERT INTO prep_probe VALUES (1)`);
    const text = `SELECT * FROM prep_probe WHERE a = $1`;
    assert.deepEqual((await db.query(text, [1])).rows, [{ a: 1 }]);
    await db.query(`ALTER TABLE prep_probe ADD COLUMN b int DEFAULT 2`);
    // In a transaction, whose connection goes back to the pool after the failure (the pool's own query
    // would drop a connection that failed), so the next transaction runs on the same connection.
    const inTransaction = () => withTransaction(db, async (tx) => (await tx.query(text, [1])).rows);
    await assert.rejects(inTransaction(), /cached plan must not change result type/);
    assert.deepEqual(await inTransaction(), [{ a: 1, b: 2 }]);
    assert.deepEqual(await inTransaction(), [{ a: 1, b: 2 }]);
  });

  it('a statement first sent in a failed transaction (not prepared there) is prepared at its next call', async (t) => {
    const { db } = await createTestDatabase(t, 1);
    const text = `SELECT $1::int * 2 AS n`;
    await assert.rejects(
      withTransaction(db, async (tx) => {
        await tx.query(`SELECT 1/0`);
      }),
    );
    await assert.rejects(
      withTransaction(db, async (tx) => {
        await tx.query(`SELECT 1/0`).catch(() => {}); // the transaction is aborted: the next statement is refused
        await tx.query(text, [2]);
      }),
      /current transaction is aborted/,
    );
    assert.equal((await withTransaction(db, (tx) => tx.query<{ n: number }>(text, [3]))).rows[0]!.n, 6);
  });

  it('a process names at most 1,000 distinct texts: more run unnamed', async (t) => {
    const { db } = await createTestDatabase(t, 1);
    for (let i = 0; i < 1_050; i++) await db.query(`SELECT $1::int + ${i} AS n`, [1]);
    await withTransaction(db, async (tx) => {
      const names = await prepared(tx);
      assert.ok(names.size >= 990 && names.size <= 1_000, `${names.size} statements prepared`);
      assert.ok(names.has(`SELECT $1::int + 0 AS n`));
      assert.ok(!names.has(`SELECT $1::int + 1049 AS n`));
    });
  });
});
