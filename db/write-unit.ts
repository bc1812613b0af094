import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';

const current = new AsyncLocalStorage<WriteUnit>();
const ignore = () => {};

/**
 * One connection and one open transaction that everything a request writes joins, so that the change
 * and what is written about it (its idempotency record) commit or roll back together. While code runs
 * inside a unit (`run`), the pool's `query` and `withTransaction` (db/pool.ts) use the unit's
 * connection: a nested transaction is a savepoint, and the request never holds a second connection.
 * Work that must wait for the commit (handing outbox rows to Temporal) is queued with `afterCommit`
 * and dropped on rollback.
 */
export class WriteUnit {
  private state: 'open' | 'committed' | 'rolled back' = 'open';
  private readonly effects: (() => void)[] = [];
  private savepoints = 0;

  private constructor(
    readonly pool: pg.Pool,
    readonly client: pg.PoolClient,
  ) {}

  /** Takes one connection from the pool and begins the unit's transaction on it. */
  static async begin(pool: pg.Pool): Promise<WriteUnit> {
    const client = await pool.connect();
    // A connection lost while checked out is reported to its queries (the request answers 500); its
    // 'error' event, unheard, would be an uncaught exception that ends the process.
    client.on('error', ignore);
    try {
      await client.query('BEGIN');
    } catch (err) {
      client.removeListener('error', ignore);
      client.release(err as Error);
      throw err;
    }
    return new WriteUnit(pool, client);
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** Runs `fn`, and everything it starts, inside the unit. */
  run<T>(fn: () => T): T {
    return current.run(this, fn);
  }

  /**
   * A transaction inside the unit: a savepoint, rolled back alone when `fn` throws. Like COMMIT, it
   * rolls back silently when a statement in it failed and `fn` returned anyway (a repository that
   * turns a constraint violation into null).
   */
  async nested<T>(fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
    const name = `nested_${++this.savepoints}`;
    await this.savepoint(name);
    let result: T;
    try {
      result = await fn(this.client);
    } catch (err) {
      await this.rollbackTo(name).catch(() => {});
      throw err;
    }
    // The failed statement's ReadyForQuery (which sets the status) may not have been read yet when `fn`
    // returns, so a RELEASE refused as "transaction is aborted" (25P02) means the same as status 'E'.
    if (this.client.getTransactionStatus() === 'E') await this.rollbackTo(name);
    else {
      try {
        await this.client.query(`RELEASE SAVEPOINT ${name}`);
      } catch (err) {
        if ((err as { code?: string }).code !== '25P02') throw err;
        await this.rollbackTo(name);
      }
    }
    return result;
  }

  async savepoint(name: string): Promise<void> {
    this.assertOpen();
    await this.client.query(`SAVEPOINT ${name}`);
  }

  /** Undoes what was written since the savepoint, also after a failed statement. */
  async rollbackTo(name: string): Promise<void> {
    this.assertOpen();
    await this.client.query(`ROLLBACK TO SAVEPOINT ${name}`);
  }

  /** `effect` runs once the unit has committed, outside it; never if it rolls back. It must not throw. */
  afterCommit(effect: () => void): void {
    this.assertOpen();
    this.effects.push(effect);
  }

  async commit(): Promise<void> {
    this.assertOpen();
    const effects = this.effects.splice(0);
    try {
      await this.client.query('COMMIT');
    } catch (err) {
      this.end('rolled back', err as Error);
      throw err;
    }
    this.end('committed');
    current.exit(() => effects.forEach((effect) => effect()));
  }

  /** Rolls back and gives the connection back; a no-op once the unit has ended. */
  async rollback(): Promise<void> {
    if (!this.isOpen) return;
    const failed = await this.client.query('ROLLBACK').then(
      () => undefined,
      (err: Error) => err,
    );
    this.end('rolled back', failed);
  }

  private end(state: 'committed' | 'rolled back', err?: Error): void {
    this.state = state;
    this.effects.length = 0;
    // A connection whose COMMIT or ROLLBACK failed is destroyed rather than reused.
    this.client.removeListener('error', ignore);
    this.client.release(err);
  }

  private assertOpen(): void {
    if (!this.isOpen) throw new Error(`this write unit has already ${this.state === 'committed' ? 'committed' : 'rolled back'}`);
  }
}

/**
 * The unit the caller runs in, when it runs in one on `pool`. A unit that has ended is an error, not
 * a reason to fall back to the pool: a write after the end would silently not be part of it.
 */
export function joinedUnit(pool: pg.Pool): WriteUnit | undefined {
  const unit = current.getStore();
  if (!unit || unit.pool !== pool) return undefined;
  if (!unit.isOpen) throw new Error('a query ran after its request had ended (its write unit is closed)');
  return unit;
}

/** True while the caller runs inside a write unit that is still open (its connection checked out). */
export function inOpenUnit(): boolean {
  return current.getStore()?.isOpen === true;
}

/** Runs `effect` after the caller's unit commits (never if it rolls back); at once outside a unit. */
export function afterCommit(effect: () => void): void {
  const unit = current.getStore();
  if (unit?.isOpen) unit.afterCommit(effect);
  else current.exit(effect);
}
