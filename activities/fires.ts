import type { FireOutcome, FireToRecord } from '../engine';
import type { ActivityDeps } from './deps';

export function createFireActivities(deps: ActivityDeps) {
  return {
    /**
     * The local activity of fireTriggerWorkflow: records the fire in one unit of work
     * (engine/fires/record-fire.ts, recordFire: the fire once per fire key, admitted, counted, the linked agent's
     * run, agent.triggered / trigger.fired and its fan-out), which then hands off what it queued and makes the
     * first attempts of its deliveries.
     */
    recordFire: (input: FireToRecord): Promise<FireOutcome> => deps.recordFire(input),
  };
}
