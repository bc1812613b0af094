import { withTransaction } from '../db/pool';
import type { FireToRecord } from '../engine/fires/record-fire';
import type { FireOutcome } from '../engine/contract';
import type { ActivityDeps } from './deps';


export function createFireActivities(deps: ActivityDeps) {
  const { db, handOff, fires: recorder } = deps;

  return {
    /**
     * The local activity of fireTriggerWorkflow: records the fire in one transaction
     * (engine/fires/record-fire.ts, recordFire: the fire once per fire key, admitted, counted, the linked agent's
     * run, agent.triggered / trigger.fired and its fan-out), then hands off what it queued and makes the
     * first attempts of its deliveries.
     */
    async recordFire(input: FireToRecord): Promise<FireOutcome> {
      const { held, ...outcome } = await withTransaction(db, (tx) => recorder.recordFire(tx, input));
      if (outcome.status === 'fired') handOff.kick(held);
      return outcome;
    },
  };
}
