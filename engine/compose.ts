import type { Client } from '@temporalio/client';
import type { Db } from '../db/pool';
import type { Config } from '../lib/config';
import type { SecretBox } from '../lib/secrets';
import { createDeliveryAttempts } from './deliveries/attempts';
import { createFirstAttempts, FIRST_ATTEMPT_HOLD_MS } from './deliveries/first-attempts';
import { createRecoveries } from './deliveries/recoveries';
import { createReplays } from './runs/replays';
import { createSlotWaits } from './deliveries/slot-waits';
import { createEventFanOut } from './events/fan-out';
import { createEventMatching } from './events/matching';
import { createFireRecorder, type FireRecorder, type FireToRecord } from './fires/record-fire';
import { createHandOff, type HandOff } from './outbox/handoff';
import type { FirstAttempt } from './outbox/starts';
import { createRunLine, runLineLimits } from './runs/run-line';
import { createTransactions } from './unit';

export interface EngineDeps {
  db: Db;
  config: Config;
  secrets: SecretBox;
  /** The process's one Temporal client. */
  client: Client;
  log?: (msg: string, err?: unknown) => void;
  /**
   * Whether this process makes the first attempt of the deliveries its writes create (the API and the
   * worker: yes). Off, every delivery's workflow starts at once (tests of the workflows alone).
   */
  firstAttempts?: boolean;
}

/**
 * The engine of one process, built once (the API: api/app.ts through api/services/index.ts; the worker:
 * worker/worker.ts, whose activities are thin adapters over it), entered through engine/index.ts. Every
 * part that keeps state for the process — the hand-off's drain, the first attempts in flight and their
 * slot waits, the run line's turns and backlog pace, the wake-ups after a run's end — exists once here,
 * so the parts cooperate without module-level state.
 *
 * Every write that queues work for Temporal is a unit of work (`transaction`, engine/unit.ts): its
 * events are fanned out by the one fan-out chosen here, and after the commit the unit kicks the
 * hand-off. Which deliveries get their first attempt in this process is decided here, once: when first
 * attempts are on and the retry schedule's first delay is 0, every new delivery's workflow start is
 * held back for FIRST_ATTEMPT_HOLD_MS while the unit's kick makes the first attempt after the commit;
 * otherwise each delivery's workflow starts at once.
 */
export function composeEngine(deps: EngineDeps) {
  const { db, config, secrets, client } = deps;
  const log = deps.log ?? (() => {});
  // The hand-off is built last (it makes the first attempts); the parts before it kick it after their commits.
  const late: { handOff?: HandOff; fires?: FireRecorder } = {};
  const kick = (held: FirstAttempt[] = []) => late.handOff?.kick(held);

  const withoutHold = createEventFanOut(db, config);
  const attemptFirst = deps.firstAttempts !== false && (withoutHold.schedule.delaysMs[0] ?? 0) === 0;
  const fanOut = attemptFirst ? createEventFanOut(db, config, { holdMs: FIRST_ATTEMPT_HOLD_MS }) : withoutHold;
  const lineLimits = runLineLimits(config);
  const transaction = createTransactions({ db, fanOut, line: lineLimits, timeoutMs: config.webhooks.timeoutMs, fires: () => late.fires!, kick });

  const slotWaits = createSlotWaits();
  const deliveries = createDeliveryAttempts({ db, config, secrets, client, transaction, slotWaits });
  const firstAttempts = attemptFirst ? createFirstAttempts({ db, config, attempts: deliveries, slotWaits, kick, log }) : null;
  const handOff = (late.handOff = createHandOff({ db, client, log, firstAttempts }));
  const fires = (late.fires = createFireRecorder({ db, config }));
  const runLine = createRunLine({ db, config, transaction });

  return {
    db,
    config,
    secrets,
    client,
    log,
    handOff,
    /** One unit of work (engine/unit.ts): `transaction(async (tx, unit) => …)`. */
    transaction,
    /** The account's line of runs as the settings make it (RUN_CONCURRENCY_PER_ACCOUNT, RUN_TIMEOUT_MS). */
    lineLimits,
    fanOut,
    deliveries,
    slotWaits,
    recoveries: createRecoveries({ db, config, transaction }),
    /** Replays of agents' failed runs, batch by batch (engine/runs/replays.ts). */
    replays: createReplays({ db, transaction }),
    fires,
    /** A fire recorded in a unit of its own (the fire workflow's local activity). */
    recordFire: (input: FireToRecord) => transaction((_tx, unit) => unit.recordFire(input)),
    eventMatching: createEventMatching({ db, fanOut, transaction }),
    runLine,
  };
}
export type Engine = ReturnType<typeof composeEngine>;
