import type { EventFilter } from '../../lib/event-filter';
import type { TriggerKind } from '../../lib/resource-types';
import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';
import type { AgentStatus } from './agents';
import { listeningTrigger } from './event-listeners';

export type TriggerScope = 'agent' | 'user';
export type { TriggerKind };

export interface TriggerRow {
  id: string;
  account_id: string;
  scope: TriggerScope;
  agent_id: string | null;
  type: TriggerKind;
  name: string;
  /** Secrets inside are sealed (lib/secret-config.ts). */
  config_json: Record<string, unknown>;
  enabled: boolean;
  /** Generated from config_json.webhookPath for webhook triggers; unique across all accounts. */
  webhook_path: string | null;
  fire_count: number;
  last_fired_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface TriggerValues {
  agentId: string | null;
  type: TriggerKind;
  name: string;
  configJson: Record<string, unknown>;
  enabled: boolean;
}

/** What recording a fire needs of its trigger. */
export interface FiringTriggerRow {
  id: string;
  account_id: string;
  agent_id: string | null;
  enabled: boolean;
  /** The linked agent's status (a template or paused agent is not run); null when not linked. */
  agent_status: AgentStatus | null;
  /** The linked agent's configJson.model as stored (whether its runs use the model); null when none. */
  agent_model: unknown;
  /** Prompt and completion tokens the trigger's account has spent today (UTC); 0 when not linked. */
  tokens_today: number;
}

/** A trigger fired by matching events; agent_output matches its filter against the run's output. */
export interface EventTriggerRow {
  id: string;
  agent_id: string | null;
  type: 'event' | 'agent_finished' | 'agent_output';
  config_json: { eventType: string; eventFilter?: EventFilter };
}

/** The columns of a cron/schedule trigger its Temporal Schedule is built from. */
export interface ScheduledTriggerRow {
  id: string;
  account_id: string;
  agent_id: string | null;
  type: TriggerKind;
  enabled: boolean;
  config_json: { cronExpression: string; timezone: string; overlapPolicy?: string; catchupWindow?: string };
}

const COLUMNS = `id, account_id, scope, agent_id, type, name, config_json, enabled, webhook_path, fire_count, last_fired_at,
  created_at, updated_at`;

/** The unique violation of another trigger already holding this webhookPath (any account). */
export function isWebhookPathTaken(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === '23505' && e.constraint === 'triggers_webhook_path_key';
}

/** The foreign key violation of an agent that no longer exists (deleted concurrently). */
export function isAgentGone(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === '23503' && e.constraint === 'triggers_agent_id_account_id_fkey';
}

export function createTriggersRepository(db: Queryable) {
  return {
    async insert(accountId: string, scope: TriggerScope, v: TriggerValues, q: Queryable = db): Promise<TriggerRow> {
      const { rows } = await q.query<TriggerRow>(
        `INSERT INTO triggers (account_id, scope, agent_id, type, name, config_json, enabled)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         RETURNING ${COLUMNS}`,
        [accountId, scope, v.agentId, v.type, v.name, JSON.stringify(v.configJson), v.enabled],
      );
      return rows[0]!;
    },

    async findById(accountId: string, scope: TriggerScope, id: string, q: Queryable = db): Promise<TriggerRow | null> {
      const { rows } = await q.query<TriggerRow>(
        `SELECT ${COLUMNS} FROM triggers WHERE id = $1 AND account_id = $2 AND scope = $3`,
        [id, accountId, scope],
      );
      return rows[0] ?? null;
    },

    async findByIdForUpdate(accountId: string, scope: TriggerScope, id: string, q: Queryable): Promise<TriggerRow | null> {
      const { rows } = await q.query<TriggerRow>(
        `SELECT ${COLUMNS} FROM triggers WHERE id = $1 AND account_id = $2 AND scope = $3 FOR UPDATE`,
        [id, accountId, scope],
      );
      return rows[0] ?? null;
    },

    /** The agent triggers of one agent, newest first. */
    async listForAgent(accountId: string, agentId: string, page: PageRequest, q: Queryable = db): Promise<Page<TriggerRow>> {
      const k = keysetTail(page, 3);
      const { rows } = await q.query<TriggerRow & { page_created_at: string }>(
        `SELECT ${COLUMNS}, ${PAGE_KEY_COLUMNS} FROM triggers
         WHERE agent_id = $1 AND account_id = $2 AND scope = 'agent' ${k.where} ${k.tail}`,
        [agentId, accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    /** The account's standalone user triggers, newest first. */
    async listUserTriggers(accountId: string, page: PageRequest, q: Queryable = db): Promise<Page<TriggerRow>> {
      const k = keysetTail(page, 2);
      const { rows } = await q.query<TriggerRow & { page_created_at: string }>(
        `SELECT ${COLUMNS}, ${PAGE_KEY_COLUMNS} FROM triggers WHERE account_id = $1 AND scope = 'user' ${k.where} ${k.tail}`,
        [accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    async update(accountId: string, scope: TriggerScope, id: string, v: TriggerValues, q: Queryable = db): Promise<TriggerRow | null> {
      const { rows } = await q.query<TriggerRow>(
        `UPDATE triggers SET agent_id = $4, type = $5, name = $6, config_json = $7, enabled = $8, updated_at = now()
         WHERE id = $1 AND account_id = $2 AND scope = $3
         RETURNING ${COLUMNS}`,
        [id, accountId, scope, v.agentId, v.type, v.name, JSON.stringify(v.configJson), v.enabled],
      );
      return rows[0] ?? null;
    },

    async delete(accountId: string, scope: TriggerScope, id: string, q: Queryable = db): Promise<boolean> {
      const { rowCount } = await q.query(`DELETE FROM triggers WHERE id = $1 AND account_id = $2 AND scope = $3`, [id, accountId, scope]);
      return rowCount === 1;
    },

    // The engine's queries below find a trigger by id alone: the id comes from a workflow or the outbox.

    /**
     * Locks the trigger to record a fire, its agent first (FOR KEY SHARE): deleting an agent locks the
     * agent, then its triggers, so taking them in the other order could deadlock a fire against that delete.
     * The agent's status is read with it: a status change commits before or after this fire, never during.
     */
    async lockForFire(id: string, q: Queryable = db): Promise<FiringTriggerRow | null> {
      const { rows: agents } = await q.query<{ status: AgentStatus; model: unknown; tokens_today: string | null }>(
        `SELECT a.status, a.config_json -> 'model' AS model,
                (SELECT u.prompt_tokens + u.completion_tokens FROM account_usage_days u
                  WHERE u.account_id = a.account_id AND u.day = (now() AT TIME ZONE 'UTC')::date) AS tokens_today
           FROM agents a WHERE a.id = (SELECT agent_id FROM triggers WHERE id = $1) FOR KEY SHARE OF a`,
        [id],
      );
      const { rows } = await q.query<Omit<FiringTriggerRow, 'agent_status' | 'agent_model' | 'tokens_today'>>(
        `SELECT id, account_id, agent_id, enabled FROM triggers WHERE id = $1 FOR UPDATE`,
        [id],
      );
      const trigger = rows[0];
      if (!trigger) return null;
      const agent = trigger.agent_id ? agents[0] : undefined;
      return { ...trigger, agent_status: agent?.status ?? null, agent_model: agent?.model ?? null, tokens_today: Number(agent?.tokens_today ?? 0) };
    },

    /** fireCount and lastFired of a fire that went ahead. */
    async countFire(id: string, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE triggers SET fire_count = fire_count + 1, last_fired_at = now() WHERE id = $1`, [id]);
    },

    /**
     * The account's enabled triggers that fire on events of `eventType` (their filters are matched by the
     * caller), oldest first: when a chain's budget runs out, the oldest triggers are the ones that fire.
     */
    async listEventTriggers(accountId: string, eventType: string, q: Queryable = db): Promise<EventTriggerRow[]> {
      const { rows } = await q.query<EventTriggerRow>(
        `SELECT id, agent_id, type, config_json FROM triggers t
         WHERE ${listeningTrigger('t', '$1', '$2')}
         ORDER BY created_at, id`,
        [accountId, eventType],
      );
      return rows;
    },

    /** Every cron/schedule trigger of every account: what Temporal's schedules must mirror. */
    async listScheduled(q: Queryable = db): Promise<{ id: string; enabled: boolean }[]> {
      const { rows } = await q.query<{ id: string; enabled: boolean }>(`SELECT id, enabled FROM triggers WHERE type IN ('schedule', 'cron')`);
      return rows;
    },

    /** The row a schedule sync converges to, of any type (a trigger that changed type loses its schedule). */
    async findForSchedule(id: string, q: Queryable = db): Promise<ScheduledTriggerRow | null> {
      const { rows } = await q.query<ScheduledTriggerRow>(
        `SELECT id, account_id, agent_id, type, enabled, config_json FROM triggers WHERE id = $1`,
        [id],
      );
      return rows[0] ?? null;
    },

    /** Serialises the reconciler's corrections of one trigger's schedule, across processes, until the transaction ends. */
    async lockScheduleCorrection(id: string, q: Queryable = db): Promise<void> {
      await q.query(`SELECT pg_advisory_xact_lock(hashtext('schedule-sync'), hashtext($1))`, [id]);
    },
  };
}
export type TriggersRepository = ReturnType<typeof createTriggersRepository>;
