import { withTransaction, type Queryable } from '../db/pool';
import { findEvent, insertEvent } from '../db/repositories/events';
import { createFiresRepository } from '../db/repositories/fires';
import { insertRun } from '../db/repositories/runs';
import { createTriggersRepository } from '../db/repositories/triggers';
import { startEventDispatch, startRun } from '../lib/engine-starts';
import { refreshNextFireAt } from '../lib/schedules';
import type { FireInput, FireOutcome } from '../workflows/types';
import type { ActivityDeps } from './deps';

/** `schedule-2026-11-21T10:00:02Z` → that time (Temporal appends the scheduled time to a schedule's workflow id). */
export function scheduledTimeOf(fireKey: string): Date | null {
  const m = /^schedule-(.+)$/.exec(fireKey);
  if (!m) return null;
  const t = new Date(m[1]!);
  return Number.isNaN(t.getTime()) ? null : t;
}

/**
 * The payload handed to the run: the manual or hook request's body, or, for an event fire, the event's
 * data (read here rather than carried: it grows along a chain, and workflow arguments stay small).
 */
async function payloadOf(q: Queryable, input: FireInput): Promise<unknown> {
  if (input.payload === undefined && input.eventId) return (await findEvent(q, input.eventId))?.data ?? null;
  return input.payload ?? null;
}

export function createFireActivities(deps: ActivityDeps) {
  const { db, client, handOff } = deps;
  const triggers = createTriggersRepository(db);
  const fires = createFiresRepository(db);

  return {
    /**
     * What happens when a trigger fires (the activity of fireTriggerWorkflow), once per fire key,
     * in one transaction:
     * 1. lock the trigger (deleted meanwhile: nothing happens);
     * 2. record the fire; a fire key already recorded answers the first fire, and a trigger disabled
     *    meanwhile records the fire as skipped and goes no further;
     * 3. count it (fireCount, lastFired);
     * 4. when the trigger is linked to an agent: insert the agent's run and start it;
     * 5. write agent.triggered (linked) or trigger.fired and start its dispatch (deliveries, chains).
     * After the commit the queued work is handed to Temporal, and a schedule's fire refreshes the
     * trigger's nextFireAt from Temporal.
     */
    async recordFire(input: FireInput & { fireKey: string }): Promise<FireOutcome> {
      const outcome = await withTransaction(db, async (tx): Promise<FireOutcome> => {
        const trigger = await triggers.lockForFire(input.triggerId, tx);
        if (!trigger) return { fireId: input.fireId ?? '', status: 'gone', runId: null };
        const chainDepth = input.chainDepth ?? 0;
        const payload = await payloadOf(tx, input);

        const fireId = await fires.insertOnce(
          {
            id: input.fireId ?? null,
            accountId: trigger.account_id,
            triggerId: trigger.id,
            fireKey: input.fireKey,
            source: input.source,
            status: trigger.enabled ? 'fired' : 'skipped',
            payload,
            chainDepth,
            scheduledAt: scheduledTimeOf(input.fireKey),
            eventId: input.eventId ?? null,
          },
          tx,
        );
        if (fireId === null) {
          const first = (await fires.findByKey(trigger.id, input.fireKey, tx))!;
          return { fireId: first.id, status: 'duplicate', runId: first.run_id };
        }
        if (!trigger.enabled) return { fireId, status: 'skipped', runId: null };

        await triggers.countFire(trigger.id, tx);

        let runId: string | null = null;
        if (trigger.agent_id) {
          const run = await insertRun(tx, {
            accountId: trigger.account_id,
            agentId: trigger.agent_id,
            triggerId: trigger.id,
            fireId,
            chainDepth,
            input: { source: input.source, triggerId: trigger.id, fireId, payload },
          });
          await startRun(tx, run);
          await fires.setRun(fireId, run.id, tx);
          runId = run.id;
        }

        const data: Record<string, unknown> = { triggerId: trigger.id, fireId, source: input.source };
        if (trigger.agent_id) Object.assign(data, { agentId: trigger.agent_id, runId });
        const event = await insertEvent(tx, {
          accountId: trigger.account_id,
          type: trigger.agent_id ? 'agent.triggered' : 'trigger.fired',
          data,
          chainDepth,
        });
        await startEventDispatch(tx, event, { agentId: trigger.agent_id, triggerId: trigger.id });
        return { fireId, status: 'fired', runId };
      });
      if (outcome.status === 'fired') handOff.kick();
      if (input.source === 'schedule' && outcome.status !== 'gone') await refreshNextFireAt(client, db, input.triggerId);
      return outcome;
    },
  };
}
