import type { FireSource } from '../../engine/contract';
import { keysetTail, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';
import type { RunStatus } from './runs';

/**
 * How a fire was recorded: 'fired' (it went ahead), 'skipped' (the trigger was disabled, or its agent a
 * template or paused, when it ran) or 'throttled' (a schedule or event fire over FIRES_PER_MINUTE).
 */
export type FireStatus = 'fired' | 'skipped' | 'throttled';

/**
 * Why a fire did not go ahead (null for one that did): skipped because its trigger was disabled, its agent
 * paused or a template when it ran (`trigger_disabled`, `agent_paused`, `agent_template`), its event filter
 * could not be evaluated within the event's work budget (`filter_budget`), or its agent's account had spent
 * MODEL_TOKENS_PER_DAY (`model_tokens_per_day`); throttled over FIRES_PER_MINUTE (`fires_per_minute`).
 */
export const FIRE_REASONS = ['trigger_disabled', 'agent_paused', 'agent_template', 'filter_budget', 'model_tokens_per_day', 'fires_per_minute'] as const;
export type FireReason = (typeof FIRE_REASONS)[number];

/** What the fire history shows: 'skipped' or 'throttled', the run's status, or 'fired' (no run). */
export type FireState = FireStatus | RunStatus;

export interface FireListRow {
  id: string;
  source: FireSource;
  run_id: string | null;
  state: FireState;
  reason: FireReason | null;
  scheduled_at: Date | null;
  created_at: Date;
}

/** One fire as `GET …/fires/:fireId` shows it: the list's row and the payload it fired with. */
export interface FireDetailRow extends FireListRow {
  payload: unknown;
}

/** A fire as recordFire writes it. */
export interface NewFire {
  /** Given by the API for manual and hook fires (it answered with it); generated otherwise. */
  id: string | null;
  accountId: string;
  triggerId: string;
  fireKey: string;
  source: FireSource;
  status: FireStatus;
  /** Why it did not go ahead; null when it did. */
  reason: FireReason | null;
  payload: unknown;
  chainDepth: number;
  /** The root event of its chain: the causing event's root (event fires), else the event it emits. */
  rootEventId: string | null;
  scheduledAt: Date | null;
  eventId: string | null;
}

export function createFiresRepository(db: Queryable) {
  return {
    /** Inserts the fire unless its (trigger, fire key) is already recorded; its id, or null for a repeat. */
    async insertOnce(f: NewFire, q: Queryable = db): Promise<string | null> {
      const { rows } = await q.query<{ id: string }>(
        `INSERT INTO fires (id, account_id, trigger_id, fire_key, source, status, payload, chain_depth, scheduled_at, event_id, root_event_id, reason)
         VALUES (coalesce($1::uuid, gen_random_uuid()), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (trigger_id, fire_key) DO NOTHING RETURNING id`,
        [
          f.id, f.accountId, f.triggerId, f.fireKey, f.source, f.status, JSON.stringify(f.payload), f.chainDepth, f.scheduledAt, f.eventId,
          f.rootEventId, f.reason,
        ],
      );
      return rows[0]?.id ?? null;
    },

    async findByKey(triggerId: string, fireKey: string, q: Queryable = db): Promise<{ id: string; run_id: string | null } | null> {
      const { rows } = await q.query<{ id: string; run_id: string | null }>(
        `SELECT id, run_id FROM fires WHERE trigger_id = $1 AND fire_key = $2`,
        [triggerId, fireKey],
      );
      return rows[0] ?? null;
    },

    async setRun(fireId: string, runId: string, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE fires SET run_id = $2 WHERE id = $1`, [fireId, runId]);
    },

    /** A trigger's fires, newest first, each with the status of the run it started. */
    async listForTrigger(accountId: string, triggerId: string, page: PageRequest, q: Queryable = db): Promise<Page<FireListRow>> {
      const k = keysetTail(page, 3, 'f');
      const { rows } = await q.query<FireListRow & { page_created_at: string }>(
        `SELECT f.id, f.source, f.run_id, f.reason, f.scheduled_at, f.created_at, f.created_at::text AS page_created_at,
           CASE WHEN f.status <> 'fired' THEN f.status WHEN r.id IS NOT NULL THEN r.status ELSE 'fired' END AS state
         FROM fires f LEFT JOIN runs r ON r.id = f.run_id
         WHERE f.trigger_id = $1 AND f.account_id = $2 ${k.where} ${k.tail}`,
        [triggerId, accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    /** One fire of the trigger with its payload, or null (unknown, or another trigger's or account's). */
    async findForTrigger(accountId: string, triggerId: string, fireId: string, q: Queryable = db): Promise<FireDetailRow | null> {
      const { rows } = await q.query<FireDetailRow>(
        `SELECT f.id, f.source, f.run_id, f.reason, f.scheduled_at, f.created_at, f.payload,
           CASE WHEN f.status <> 'fired' THEN f.status WHEN r.id IS NOT NULL THEN r.status ELSE 'fired' END AS state
         FROM fires f LEFT JOIN runs r ON r.id = f.run_id
         WHERE f.id = $1 AND f.trigger_id = $2 AND f.account_id = $3`,
        [fireId, triggerId, accountId],
      );
      return rows[0] ?? null;
    },

    /**
     * An event fire that does not go ahead, recorded in the transaction of the event's fan-out
     * (engine/events/fan-out.ts, activities/event-matching.ts) as recordFire would record it (not counted, no run, no
     * event: the event's data as its payload), with no workflow of its own:
     * - `throttled` (`fires_per_minute`): its account is over FIRES_PER_MINUTE. Only while its agent is neither
     *   a template nor paused (that fire is `skipped`, which its workflow records);
     * - `skipped` (`filter_budget`): its filter was not evaluated within the event's work budget.
     * Only while its trigger is there and enabled. The trigger's row is key-share locked, so a delete of it
     * waits for this; a trigger locked already (being fired, or deleted) is skipped, never waited for — a
     * throttled fire then goes to its workflow: the caller may be a fire holding its account's fire window
     * (engine/fires/record-fire.ts), and a fire of that trigger holds the trigger and waits for the window. Answers
     * whether it was recorded.
     */
    async insertEventFireNotMade(
      f: { accountId: string; triggerId: string; eventId: string; chainDepth: number; rootEventId: string; payload: unknown },
      outcome: { status: 'throttled'; reason: 'fires_per_minute' } | { status: 'skipped'; reason: 'filter_budget' },
      q: Queryable = db,
    ): Promise<boolean> {
      const agentRuns = outcome.status === 'throttled' ? `AND NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = t.agent_id AND a.status IN ('template', 'paused'))` : '';
      const { rows } = await q.query(
        `INSERT INTO fires (account_id, trigger_id, fire_key, source, status, reason, payload, chain_depth, event_id, root_event_id)
         SELECT $1, t.id, 'event-' || $3::uuid::text, 'event', $7, $8, $4, $5, $3::uuid, $6 FROM triggers t
         WHERE t.id = $2 AND t.enabled ${agentRuns}
         FOR KEY SHARE OF t SKIP LOCKED
         ON CONFLICT (trigger_id, fire_key) DO NOTHING RETURNING id`,
        [f.accountId, f.triggerId, f.eventId, JSON.stringify(f.payload), f.chainDepth, f.rootEventId, outcome.status, outcome.reason],
      );
      return rows.length > 0;
    },
  };
}
export type FiresRepository = ReturnType<typeof createFiresRepository>;

/**
 * FIRES_PER_MINUTE (docs/api.md § Rate limits): one fixed one-minute window per account, in Postgres so the API (manual
 * and hook fires) and every worker (schedule and event fires) share it. One upsert per fire.
 */
export function createFireRateRepository(db: Queryable) {
  return {
    /**
     * Counts one fire of the account if its current window has room; the window starts afresh a minute
     * after it began. Returns null when taken, else the seconds until the window ends (nothing counted).
     * Inside a transaction the account's row stays locked until it ends, so the fire and its count commit together.
     */
    async take(accountId: string, perMinute: number, q: Queryable = db): Promise<{ retryAfterSeconds: number } | null> {
      const { rows } = await q.query(
        `INSERT INTO account_fire_windows AS w (account_id, window_start, fires) VALUES ($1, now(), 1)
         ON CONFLICT (account_id) DO UPDATE SET
           fires = CASE WHEN w.window_start <= now() - interval '1 minute' THEN 1 ELSE w.fires + 1 END,
           window_start = CASE WHEN w.window_start <= now() - interval '1 minute' THEN now() ELSE w.window_start END
         WHERE w.window_start <= now() - interval '1 minute' OR w.fires < $2
         RETURNING fires`,
        [accountId, perMinute],
      );
      if (rows.length > 0) return null;
      const { rows: left } = await q.query<{ seconds: number }>(
        `SELECT greatest(1, ceil(extract(epoch FROM window_start + interval '1 minute' - now())))::int AS seconds
         FROM account_fire_windows WHERE account_id = $1`,
        [accountId],
      );
      return { retryAfterSeconds: left[0]?.seconds ?? 1 };
    },

    /**
     * Whether the account's current window is full (nothing taken, nothing locked): a fire now would be over.
     * Now is the statement's time, not the transaction's: a long transaction must not see a window that has
     * since begun afresh as full.
     */
    async isFull(accountId: string, perMinute: number, q: Queryable = db): Promise<boolean> {
      const { rows } = await q.query(
        `SELECT 1 FROM account_fire_windows WHERE account_id = $1 AND window_start > statement_timestamp() - interval '1 minute' AND fires >= $2`,
        [accountId, perMinute],
      );
      return rows.length > 0;
    },
  };
}

export type FireRateRepository = ReturnType<typeof createFireRateRepository>;
