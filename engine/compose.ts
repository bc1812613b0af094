import type { Client } from '@temporalio/client';
import type { Db } from '../db/pool';
import type { Config } from '../lib/config';
import type { SecretBox } from '../lib/secrets';
import { createDeliveryAttempts } from './deliveries/attempts';
import { createFirstAttempts, FIRST_ATTEMPT_HOLD_MS } from './deliveries/first-attempts';
import { createRecoveries } from './deliveries/recoveries';
import { createSlotWaits } from './deliveries/slot-waits';
import { createEventFanOut } from './events/fan-out';
import { createEventMatching } from './events/matching';
import { createFireRecorder } from './fires/record-fire';
import { createHandOff, type HandOff } from './outbox/handoff';
import { createRunLine } from './runs/run-line';

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
 * worker/worker.ts, whose activities are thin adapters over it). Every part that keeps state for the
 * process — the hand-off's drain, the first attempts in flight and their slot waits, the run line's
 * turns and backlog pace — exists once here, so the parts cooperate without module-level state.
 *
 * Which deliveries get their first attempt in this process is decided here, once:
 * - `fanOut` (events written by API requests and by fires: recordFire) holds each new delivery's
 *   workflow start back for FIRST_ATTEMPT_HOLD_MS while the hand-off makes the first attempt after the
 *   commit — when first attempts are on and the retry schedule's first delay is 0;
 * - `fanOutToWorkflows` starts each delivery's workflow at once. It fans out the events written where
 *   nothing hands the held deliveries to the first attempts: a run's end (agent.completed /
 *   agent.failed: its activity kicks the hand-off without them), the worker's deferred matching, a
 *   webhook disabled by an attempt, and the reconciler's missed fires.
 */
export function composeEngine(deps: EngineDeps) {
  const { db, config, secrets, client } = deps;
  const log = deps.log ?? (() => {});
  // The hand-off is built last (it makes the first attempts); the parts before it kick it when called.
  const late: { handOff?: HandOff } = {};
  const kick = () => late.handOff?.kick();

  const fanOutToWorkflows = createEventFanOut(config);
  const slotWaits = createSlotWaits();
  const deliveries = createDeliveryAttempts({ db, config, secrets, client, fanOut: fanOutToWorkflows, slotWaits, kick });
  const firstAttempts = deps.firstAttempts === false ? null : createFirstAttempts({ db, config, attempts: deliveries, slotWaits, kick, log });
  const handOff = (late.handOff = createHandOff({ db, client, log, firstAttempts }));
  const attemptFirst = firstAttempts?.immediate ?? false;
  const fanOut = attemptFirst ? createEventFanOut(config, { holdMs: FIRST_ATTEMPT_HOLD_MS }) : fanOutToWorkflows;

  return {
    db,
    config,
    secrets,
    client,
    log,
    handOff,
    fanOut,
    fanOutToWorkflows,
    deliveries,
    slotWaits,
    recoveries: createRecoveries({ db, config, kick }),
    fires: createFireRecorder({ config, fanOut }),
    eventMatching: createEventMatching({ db, fanOut: fanOutToWorkflows, kick }),
    runLine: createRunLine({ db, config, onPromoted: kick }),
  };
}
export type Engine = ReturnType<typeof composeEngine>;
