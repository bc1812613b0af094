import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/pool';
import { createEventsRepository } from '../../db/repositories/events';
import { createFireRateRepository, createFiresRepository, type FireReason, type FireStatus } from '../../db/repositories/fires';
import { createRunsRepository } from '../../db/repositories/runs';
import { createTriggersRepository, type FiringTriggerRow } from '../../db/repositories/triggers';
import type { Config } from '../../lib/config';
import { overModelBudget, runsWithModel } from '../../lib/model-settings';
import type { Unit } from '../unit';
import { scheduledTimeOf, type FireInput, type FireOutcome, type FireSource } from '../contract';

/** Agents that are not run: a template is a blueprint, a paused agent is switched off. */
const NOT_RUN: Record<string, FireReason> = { template: 'agent_template', paused: 'agent_paused' };

/**
 * A manual or hook fire over its account's FIRES_PER_MINUTE: nothing is recorded (the transaction is
 * rolled back) and the API answers 429 with Retry-After.
 */
export class FireRateExceeded extends Error {
  constructor(
    readonly perMinute: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`Too many fires: at most ${perMinute} per minute per account; retry in ${retryAfterSeconds} seconds`);
  }
}

/**
 * Why a fire is skipped before it counts against the rate, or null: a disabled trigger, one linked to a
 * template or paused agent, or to an agent whose runs use the model while its account has spent
 * MODEL_TOKENS_PER_DAY.
 */
export function skipReason(
  trigger: Pick<FiringTriggerRow, 'enabled' | 'agent_id' | 'agent_status' | 'agent_model' | 'tokens_today'>,
  model: Config['model'],
): FireReason | null {
  if (!trigger.enabled) return 'trigger_disabled';
  const notRun = trigger.agent_status !== null ? NOT_RUN[trigger.agent_status] : undefined;
  if (notRun) return notRun;
  if (trigger.agent_id && runsWithModel({ model: trigger.agent_model }, model) && overModelBudget(trigger.tokens_today, model.tokensPerDay)) {
    return 'model_tokens_per_day';
  }
  return null;
}

/** A fire over its account's FIRES_PER_MINUTE: a schedule or event fire is throttled, a manual or hook fire refused. */
export function overRate(source: FireSource, perMinute: number, retryAfterSeconds: number): { status: FireStatus; reason: FireReason } {
  if (source === 'manual' || source === 'webhook') throw new FireRateExceeded(perMinute, retryAfterSeconds);
  return { status: 'throttled', reason: 'fires_per_minute' };
}

/** The chain a fire's event belongs to: an event fire's stays in its cause's chain; any other fire that goes ahead roots a new one. */
export function rootEventOf(input: Pick<FireInput, 'rootEventId'>, status: FireStatus, eventId: string): string | null {
  return input.rootEventId ?? (status === 'fired' ? eventId : null);
}

/** The event a fire that went ahead writes: agent.triggered with its run when the trigger is linked to an agent, else trigger.fired. */
export function firedEvent(
  trigger: Pick<FiringTriggerRow, 'id' | 'agent_id'>,
  fire: { fireId: string; source: FireSource; runId: string | null },
): { type: 'agent.triggered' | 'trigger.fired'; data: Record<string, unknown> } {
  const data: Record<string, unknown> = { triggerId: trigger.id, fireId: fire.fireId, source: fire.source };
  if (trigger.agent_id) Object.assign(data, { agentId: trigger.agent_id, runId: fire.runId });
  return { type: trigger.agent_id ? 'agent.triggered' : 'trigger.fired', data };
}

/** A fire to record: its input, and the fire key that makes it once (`schedule-<time>`, `manual-<id>`, `hook-<id>`, `event-<eventId>`). */
export type FireToRecord = FireInput & { fireKey: string };

/** How a fire was recorded, and the deliveries its event wrote for the caller to attempt first. */
export type RecordedFire = FireOutcome;

/** What happens when a trigger fires: shared by the fire workflow's local activity and the API. */
export function createFireRecorder(deps: { db: Queryable; config: Pick<Config, 'fires' | 'runs' | 'model'> }) {
  const { config } = deps;
  const events = createEventsRepository(deps.db);

  /**
   * The payload handed to the run: the manual or hook request's body, or, for an event fire, the event's
   * data (read here rather than carried: it grows along a chain, and workflow arguments stay small).
   */
  async function payloadOf(q: Queryable, input: FireInput): Promise<unknown> {
    if (input.payload === undefined && input.eventId) return (await events.findEvent(input.eventId, q))?.data ?? null;
    return input.payload ?? null;
  }

  /**
   * Whether the fire goes ahead, and why not: a disabled trigger, one linked to a template or paused
   * agent, or to an agent whose runs use the model while its account has spent MODEL_TOKENS_PER_DAY, is
   * skipped; a schedule or event fire over the account's FIRES_PER_MINUTE is throttled, a manual or hook
   * fire refused (FireRateExceeded). Only a fire that goes ahead is counted. The account's window is
   * taken after the trigger's lock, in every process, so two fires never wait on each other's locks.
   */
  async function admit(trigger: FiringTriggerRow, source: FireSource, tx: Queryable): Promise<{ status: FireStatus; reason: FireReason | null }> {
    const skipped = skipReason(trigger, config.model);
    if (skipped) return { status: 'skipped', reason: skipped };
    const over = await createFireRateRepository(tx).take(trigger.account_id, config.fires.perMinute);
    if (!over) return { status: 'fired', reason: null };
    return overRate(source, config.fires.perMinute, over.retryAfterSeconds);
  }

  return {
    /**
     * What happens when a trigger fires, once per fire key, in the caller's transaction (the local
     * activity of fireTriggerWorkflow; the API for manual and hook fires):
     * 1. lock the trigger (deleted meanwhile: nothing happens); a fire key already recorded answers
     *    the first fire;
     * 2. admit it: skipped (trigger disabled, agent a template or paused, its model runs over
     *    MODEL_TOKENS_PER_DAY) or throttled (over FIRES_PER_MINUTE) fires are recorded as such, with their
     *    reason, and go no further;
     * 3. record and count it (fireCount, lastFired);
     * 4. when the trigger is linked to an agent: insert the agent's run and start it;
     * 5. write agent.triggered (linked) or trigger.fired and its fan-out (engine/events/fan-out.ts: its
     *    deliveries and the fires of the triggers it matches): an event fire's event stays in its
     *    cause's chain; any other fire's event roots a new chain.
     * In the caller's unit of work (engine/unit.ts): after its commit the unit hands off what the fire
     * queued and makes the first attempts of its deliveries.
     * Nothing else is asked of Temporal: the trigger's nextFireAt is computed from its expression.
     */
    async recordFire(unit: Unit, input: FireToRecord): Promise<RecordedFire> {
      const { tx } = unit;
      const fires = createFiresRepository(tx);
      const triggers = createTriggersRepository(tx);
      const runs = createRunsRepository(tx);
      const trigger = await triggers.lockForFire(input.triggerId);
      if (!trigger) return { fireId: input.fireId ?? '', status: 'gone', runId: null };
      // Read before admitting, so a repeated fire key (a retried activity) takes nothing from the rate.
      const first = await fires.findByKey(trigger.id, input.fireKey);
      if (first) return { fireId: first.id, status: 'duplicate', runId: first.run_id };

      const { status, reason } = await admit(trigger, input.source, tx);
      const chainDepth = input.chainDepth ?? 0;
      const payload = await payloadOf(tx, input);
      const eventId = randomUUID();
      const rootEventId = rootEventOf(input, status, eventId);
      const fireId = await fires.insertOnce(
        {
          id: input.fireId ?? null,
          accountId: trigger.account_id,
          triggerId: trigger.id,
          fireKey: input.fireKey,
          source: input.source,
          status,
          reason,
          payload,
          chainDepth,
          scheduledAt: scheduledTimeOf(input.fireKey),
          eventId: input.eventId ?? null,
          rootEventId,
        },
      );
      // The trigger's lock keeps the key free since findByKey; this only keeps the insert honest.
      if (fireId === null) throw new Error(`fire key ${input.fireKey} of trigger ${trigger.id} was recorded meanwhile`);
      if (status !== 'fired') return { fireId, status, runId: null };

      await triggers.countFire(trigger.id);

      let runId: string | null = null;
      if (trigger.agent_id) {
        const run = await runs.insertRun({
          accountId: trigger.account_id,
          agentId: trigger.agent_id,
          triggerId: trigger.id,
          fireId,
          chainDepth,
          input: { source: input.source, triggerId: trigger.id, fireId, payload },
        });
        await unit.startRun(run);
        await fires.setRun(fireId, run.id);
        runId = run.id;
      }

      await unit.emit(
        { id: eventId, accountId: trigger.account_id, ...firedEvent(trigger, { fireId, source: input.source, runId }), chainDepth, rootEventId },
        { agentId: trigger.agent_id, triggerId: trigger.id },
      );
      return { fireId, status: 'fired', runId };
    },
  };
}
export type FireRecorder = ReturnType<typeof createFireRecorder>;
