import { withTransaction } from '../db/pool';
import { findEvent, insertEvent } from '../db/repositories/events';
import { insertRun } from '../db/repositories/runs';
import { startEventDispatch, startRun } from '../lib/engine-starts';
import { workflowIds } from '../lib/temporal-names';
import type { FireInput, FireOutcome } from '../workflows/types';
import type { ActivityDeps } from './deps';

interface FireTriggerRow {
  id: string;
  account_id: string;
  agent_id: string | null;
  enabled: boolean;
}

/** `schedule-2026-11-21T10:00:02Z` → that time (Temporal appends the scheduled time to a schedule's workflow id). */
export function scheduledTimeOf(fireKey: string): Date | null {
  const m = /^schedule-(.+)$/.exec(fireKey);
  if (!m) return null;
  const t = new Date(m[1]!);
  return Number.isNaN(t.getTime()) ? null : t;
}

export function createFireActivities(deps: ActivityDeps) {
  const { db, handOff } = deps;

  /** Temporal's next action time for the trigger's schedule, kept as its nextFireAt. Best effort. */
  async function refreshNextFire(triggerId: string): Promise<void> {
    try {
      const { rows } = await db.query<{ version: string }>(`SELECT updated_at::text AS version FROM triggers WHERE id = $1`, [triggerId]);
      const description = await deps.client.schedule.getHandle(workflowIds.triggerSchedule(triggerId)).describe();
      const next = description.state.paused ? null : (description.info.nextActionTimes[0] ?? null);
      // Not over a newer version of the trigger: its own sync reports that one.
      await db.query(`UPDATE triggers SET next_fire_at = $2 WHERE id = $1 AND updated_at = $3::timestamptz`, [triggerId, next, rows[0]?.version]);
    } catch {
      // The API falls back to computing it from the expression.
    }
  }

  return {
    /**
     * Records one fire, once: the fire row is unique per (trigger, fire key), and the count, lastFired,
     * the run and the event are written only with a new row, in the same transaction.
     */
    async recordFire(input: FireInput & { fireKey: string }): Promise<FireOutcome> {
      const outcome = await withTransaction(db, async (tx): Promise<FireOutcome> => {
        // Lock order agent → trigger, as deleting an agent does (agent FOR UPDATE, then its triggers):
        // the other order could deadlock a fire against that delete.
        await tx.query(
          `SELECT 1 FROM agents WHERE id = (SELECT agent_id FROM triggers WHERE id = $1) FOR KEY SHARE`,
          [input.triggerId],
        );
        const { rows } = await tx.query<FireTriggerRow>(
          `SELECT id, account_id, agent_id, enabled FROM triggers WHERE id = $1 FOR UPDATE`,
          [input.triggerId],
        );
        const trigger = rows[0];
        if (!trigger) return { fireId: input.fireId ?? '', status: 'gone', runId: null };
        const chainDepth = input.chainDepth ?? 0;
        // An event fire carries only the event id (workflow arguments stay small along a chain); its
        // payload is the event's data.
        let payload = input.payload ?? null;
        if (input.payload === undefined && input.eventId) payload = (await findEvent(tx, input.eventId))?.data ?? null;
        const inserted = await tx.query<{ id: string }>(
          `INSERT INTO fires (id, account_id, trigger_id, fire_key, source, status, payload, chain_depth, scheduled_at, event_id)
           VALUES (coalesce($1::uuid, gen_random_uuid()), $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT (trigger_id, fire_key) DO NOTHING RETURNING id`,
          [
            input.fireId ?? null, trigger.account_id, trigger.id, input.fireKey, input.source, trigger.enabled ? 'fired' : 'skipped',
            JSON.stringify(payload), chainDepth, scheduledTimeOf(input.fireKey), input.eventId ?? null,
          ],
        );
        if (inserted.rowCount === 0) {
          const { rows: existing } = await tx.query<{ id: string; run_id: string | null }>(
            `SELECT id, run_id FROM fires WHERE trigger_id = $1 AND fire_key = $2`,
            [trigger.id, input.fireKey],
          );
          return { fireId: existing[0]!.id, status: 'duplicate', runId: existing[0]!.run_id };
        }
        const fireId = inserted.rows[0]!.id;
        if (!trigger.enabled) return { fireId, status: 'skipped', runId: null };

        await tx.query(`UPDATE triggers SET fire_count = fire_count + 1, last_fired_at = now() WHERE id = $1`, [trigger.id]);
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
          runId = run.id;
          await tx.query(`UPDATE fires SET run_id = $2 WHERE id = $1`, [fireId, runId]);
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
      if (input.source === 'schedule' && outcome.status !== 'gone') await refreshNextFire(input.triggerId);
      return outcome;
    },
  };
}
