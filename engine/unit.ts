import type { PoolClient } from 'pg';
import { withTransaction, type Db } from '../db/pool';
import { createEventsRepository, type EventRow, type NewEvent } from '../db/repositories/events';
import type { RunRow } from '../db/repositories/runs';
import type { FanOutResult, FireInput, FireOutcome } from './contract';
import type { EventAbout, EventFanOut } from './events/fan-out';
import { signalApprovalDecided, startDelivery, startRecovery, startReplay, startRun, startScheduleSync, type FirstAttempt, type RunLineLimits } from './outbox/starts';

/** A fire to record (engine/fires/record-fire.ts): its input and its fire key. */
type FireToRecord = FireInput & { fireKey: string };
/** The fire recorder, as the unit calls it (engine/fires/record-fire.ts; declared here so the two modules don't import each other). */
interface FireRecorder {
  recordFire(unit: Unit, input: FireToRecord): Promise<FireOutcome>;
}

/** An emitted event: its row and what its fan-out wrote. */
export type EmittedEvent = EventRow & { fanOut: FanOutResult & { deferred: boolean } };

/**
 * One unit of work of the engine (docs/architecture.md § The unit of work): everything written through
 * it commits in its transaction, and what it queued for Temporal is handed off after the commit — by
 * the unit, never by its caller; nothing if the transaction rolls back.
 */
export interface Unit {
  /** The unit's transaction, for the caller's own statements. */
  readonly tx: PoolClient;
  /** Writes the event and its fan-out (engine/events/fan-out.ts): its deliveries and the fires of the triggers it matches. */
  emit(event: NewEvent, about?: EventAbout): Promise<EmittedEvent>;
  /** A trigger's fire, recorded once per fire key (engine/fires/record-fire.ts). */
  recordFire(input: FireToRecord): Promise<FireOutcome>;
  /** The run's workflow, or the run parked in its account's line (engine/outbox/starts.ts startRun). */
  startRun(run: Pick<RunRow, 'id' | 'account_id' | 'agent_id' | 'trigger_id'>): Promise<boolean>;
  /** A new generation of a delivery's attempts, its first at once (a manual retry, a recovery's batch). */
  startDelivery(delivery: { id: string; accountId: string }, generation: number): Promise<void>;
  /** A recovery of a webhook's failed deliveries (engine/outbox/starts.ts startRecovery). */
  startRecovery(recovery: { id: string; accountId: string }): Promise<void>;
  /** A replay of an agent's failed runs (engine/outbox/starts.ts startReplay). */
  startReplay(replay: { id: string; accountId: string; agentId: string }): Promise<void>;
  /** The Schedule of a trigger converges to its row (engine/outbox/starts.ts startScheduleSync). */
  startScheduleSync(triggerId: string): Promise<void>;
  /** A decided approval reaches its waiting run (engine/outbox/starts.ts signalApprovalDecided). */
  signalApprovalDecided(runId: string): Promise<void>;
  /**
   * Work queued in the unit by another hand: the database's own trigger on `triggers` (a schedule
   * sync), a part of the engine that writes its outbox rows itself (a parked run's start). Deliveries
   * written with their workflow start held (`held`) get their first attempt from this process.
   */
  queued(held?: FirstAttempt[]): void;
}

export interface UnitDeps {
  db: Db;
  fanOut: EventFanOut;
  line: RunLineLimits;
  /** The delivery timeout of a new generation's attempts (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  fires: () => FireRecorder;
  /** After the commit: hand the outbox rows to Temporal and make the held deliveries' first attempts. */
  kick: (held: FirstAttempt[]) => void;
}

/**
 * `transaction(fn)`: runs `fn` in one transaction (a savepoint inside a write unit: db/write-unit.ts)
 * with a unit over it; after the commit, when anything was queued, kicks the hand-off once with the
 * deliveries held for their first attempt. Inside a write unit the kick waits for the unit's commit
 * (engine/outbox/handoff.ts `kick`), and never happens when it rolls back.
 */
export function createTransactions(deps: UnitDeps) {
  const events = createEventsRepository(deps.db);
  return async function transaction<T>(fn: (tx: PoolClient, unit: Unit) => Promise<T>): Promise<T> {
    const held: FirstAttempt[] = [];
    let queued = false;
    const result = await withTransaction(deps.db, (tx) => {
      const unit: Unit = {
        tx,
        async emit(e, about = {}) {
          const event = await events.insertEvent(e, tx);
          const { held: written, queued: wrote, ...fanOut } = await deps.fanOut.fanOutEvent(tx, event, about);
          held.push(...written);
          if (wrote) queued = true;
          const { settled: _settled, ...row } = event;
          return { ...row, fanOut };
        },
        recordFire: (input) => deps.fires().recordFire(unit, input),
        async startRun(run) {
          const started = await startRun(tx, run, deps.line);
          if (started) queued = true;
          return started;
        },
        async startDelivery(delivery, generation) {
          await startDelivery(tx, delivery, generation, { delaysMs: [0], timeoutMs: deps.timeoutMs });
          queued = true;
        },
        async startRecovery(recovery) {
          await startRecovery(tx, recovery);
          queued = true;
        },
        async startReplay(replay) {
          await startReplay(tx, replay);
          queued = true;
        },
        async startScheduleSync(triggerId) {
          await startScheduleSync(tx, triggerId);
          queued = true;
        },
        async signalApprovalDecided(runId) {
          await signalApprovalDecided(tx, runId);
          queued = true;
        },
        queued(written = []) {
          queued = true;
          held.push(...written);
        },
      };
      return fn(tx, unit);
    });
    if (queued) deps.kick(held);
    return result;
  };
}
export type Transaction = ReturnType<typeof createTransactions>;
