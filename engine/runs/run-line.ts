import type pg from 'pg';
import type { Db } from '../../db/pool';
import { createRunsRepository } from '../../db/repositories/runs';
import type { Config } from '../../lib/config';
import { startRunWorkflow, type RunLineLimits } from '../outbox/starts';
import type { Transaction, Unit } from '../unit';

/** How often a queued run's workflow asks for a slot again when no `runSlotFreed` signal woke it (the safety net). */
export const QUEUE_RECHECK_MS = 60_000;
/**
 * A queued run keeps its place in its account's line while its workflow checks in (every
 * QUEUE_RECHECK_MS at most) or, before its first check-in, for this long after it was created (or
 * unparked). A run silent for longer (its workflow could not start, or is gone) is passed over by younger
 * runs until it checks in again, when it is first in line once more: it can be late, but it can't block
 * the line. A running run holds its slot until it ends, or at most RUN_TIMEOUT_MS + this long after it started.
 */
export const QUEUE_PLACE_MS = 5 * QUEUE_RECHECK_MS;

/** RUN_CONCURRENCY_PER_ACCOUNT, how long a running run holds its slot at most, and the run's time limit (RUN_TIMEOUT_MS). */
export const runLineLimits = (config: Pick<Config, 'runs'>): RunLineLimits => ({
  limit: config.runs.concurrencyPerAccount,
  placeMs: QUEUE_PLACE_MS,
  holdMs: config.runs.timeoutMs + QUEUE_PLACE_MS,
  timeoutMs: config.runs.timeoutMs,
});

/**
 * Each account's pace of promotions in this process (its one run line: engine/compose.ts): a token
 * bucket holding up to the account's concurrency, refilled at RUN_BACKLOG_PER_SECOND. Full buckets are
 * dropped (a full bucket and none are the same).
 */
export function createPace(perSecond: number, burst: number) {
  const backlogBuckets = new Map<string, { tokens: number; at: number }>();
  const refilled = (accountId: string) => {
    const now = Date.now();
    const bucket = backlogBuckets.get(accountId) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    return bucket;
  };
  return {
    /** How many of `wanted` promotions the account's pace allows now. */
    allows: (accountId: string, wanted: number) => Math.min(wanted, Math.floor(refilled(accountId).tokens)),
    took(accountId: string, n: number): void {
      const bucket = refilled(accountId);
      bucket.tokens -= n;
      if (bucket.tokens >= burst) backlogBuckets.delete(accountId);
      else backlogBuckets.set(accountId, bucket);
    },
    /** How long until the pace allows one more. */
    waitMs: (accountId: string) => Math.max(1, Math.ceil(((1 - refilled(accountId).tokens) / perSecond) * 1000)),
  };
}

/** Accounts looked at per sweep of `promoteAll`. */
const SWEEP_ACCOUNTS = 500;

/**
 * An account's line of runs (RUN_CONCURRENCY_PER_ACCOUNT slots). A run queued while the line is full is
 * parked (engine/outbox/starts.ts `startRun`): it waits in Postgres, with no workflow, so one account's
 * thousands of queued runs cost the Temporal server nothing until they can run — every other account's
 * runs would otherwise queue behind their starts, timers and signals. When a slot frees (a run of the
 * account ended: engine/runs/wake-ups.ts; and, as a safety net, every reconciler round: worker/reconciler.ts),
 * `promote` gives the oldest parked runs a workflow, as many as there are free slots; each then takes its
 * slot through the run workflow's own locked decision (beginRunStep), as every run does.
 *
 * The backlog is paced: each process promotes an account's parked runs at most RUN_BACKLOG_PER_SECOND
 * (up to RUN_CONCURRENCY_PER_ACCOUNT at once), promoting again by itself when the pace allows, and they
 * start at BACKLOG_PRIORITY, below fresh work. Without it an account with thousands of runs queued keeps
 * its slots full back to back, as fast as the engine can go: the engine saturated, every other account's
 * runs queue behind its work in the worker, the Temporal server and Postgres, none of which can tell
 * them apart (bench/isolation.ts, hooks flood).
 */
export function createRunLine(deps: { db: Db; config: Pick<Config, 'runs'>; transaction: Transaction }) {
  const { db, transaction } = deps;
  const runs = createRunsRepository(db);
  const { limit, holdMs, timeoutMs } = runLineLimits(deps.config);
  const inTurn = createTurns();
  const { backlogPerSecond } = deps.config.runs;
  const pace = backlogPerSecond > 0 ? createPace(backlogPerSecond, limit) : null;
  const retries = new Set<string>();

  /** Promotes the account's backlog again once its pace allows (the reconciler's round is the safety net). */
  function retryLater(accountId: string): void {
    if (!pace || retries.has(accountId)) return;
    retries.add(accountId);
    setTimeout(() => {
      retries.delete(accountId);
      promote(accountId).catch(() => {});
    }, pace.waitMs(accountId)).unref();
  }

  /**
   * `fn` in a transaction holding the account's run-slot lock, which serialises every decision about the
   * account's slots (across processes). In this process the account's decisions also take turns before
   * they ask for a connection: a burst of one account's runs waits here, not in the pool, where it would
   * hold every connection waiting for its own lock while other accounts' runs wait for a connection.
   */
  function locked<T>(accountId: string, fn: (tx: pg.PoolClient, unit: Unit) => Promise<T>): Promise<T> {
    return inTurn(accountId, () =>
      transaction(async (tx, unit) => {
        await runs.lockAccountRunSlots(accountId, tx);
        return fn(tx, unit);
      }),
    );
  }

  /**
   * `fn` in a transaction holding the account's run-slot lock *shared*, when every open run of the account
   * (queued, parked or running) fits in its slots: then no run waits for another and there is nothing to
   * decide, so these decisions run side by side (a burst of one account's runs under its limit does not
   * queue on its lock). A decision under the exclusive lock (`locked`) waits for them and sees their
   * writes, and theirs wait for it. Null, without calling `fn`, when the runs do not all fit.
   */
  function whenAllFit<T>(accountId: string, fn: (tx: pg.PoolClient, unit: Unit) => Promise<T>): Promise<T | null> {
    return transaction(async (tx, unit) => {
      await runs.lockAccountRunSlotsShared(accountId, tx);
      if ((await runs.countOpenRuns(accountId, limit + 1, tx)) > limit) return null;
      return fn(tx, unit);
    });
  }

  /** Gives the account's oldest parked runs a workflow start for each free slot (handed off after the commit); answers how many. */
  async function promote(accountId: string): Promise<number> {
    // Most ends find nobody parked: one indexed read, and the lock only when there is someone to promote.
    if (!(await runs.hasParkedRuns(accountId))) return 0;
    return locked(accountId, async (tx, unit) => {
      const running = await runs.countRunningRuns(accountId, holdMs, tx);
      const free = running >= limit ? 0 : limit - running - (await runs.countWaitingRuns(accountId, QUEUE_PLACE_MS, limit - running, tx));
      if (free <= 0) return 0;
      const granted = pace ? pace.allows(accountId, free) : free;
      const unparked = granted > 0 ? await runs.unparkRuns(accountId, granted, tx) : [];
      pace?.took(accountId, unparked.length);
      // Slots left free by the pace (not for want of parked runs): promote again once it allows.
      if (granted < free && unparked.length === granted) retryLater(accountId);
      for (const run of unparked) await startRunWorkflow(tx, run, timeoutMs, true);
      if (unparked.length > 0) unit.queued();
      return unparked.length;
    });
  }

  return {
    locked,
    whenAllFit,
    promote,
    /** `promote` for every account with parked runs (the reconciler's safety net); answers how many runs got a workflow. */
    async promoteAll(): Promise<number> {
      let promoted = 0;
      for (const accountId of await runs.accountsWithParkedRuns(SWEEP_ACCOUNTS)) promoted += await promote(accountId);
      return promoted;
    },
  };
}
export type RunLine = ReturnType<typeof createRunLine>;

/** Runs each key's calls one at a time, in the order they came (other keys are not held up). */
export function createTurns() {
  const tails = new Map<string, Promise<void>>();
  return async function inTurn<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = tails.get(key);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const tail = (before ?? Promise.resolve()).then(() => mine);
    tails.set(key, tail);
    if (before) await before;
    try {
      return await fn();
    } finally {
      done();
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}
