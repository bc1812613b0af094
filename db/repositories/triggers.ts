import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

export type TriggerScope = 'agent' | 'user';
export type TriggerKind = 'schedule' | 'cron' | 'webhook' | 'event' | 'agent_finished' | 'agent_output';

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
  /** Temporal's next action time for the schedule, as of its last sync or fire (null: not known). */
  next_fire_at: Date | null;
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

const COLUMNS = `id, account_id, scope, agent_id, type, name, config_json, enabled, webhook_path, fire_count, last_fired_at,
  next_fire_at, created_at, updated_at`;

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
        // A changed schedule forgets Temporal's next time until its sync reports the new one.
        `UPDATE triggers SET agent_id = $4, type = $5, name = $6, config_json = $7, enabled = $8, updated_at = now(),
           next_fire_at = CASE WHEN (type, config_json, enabled) IS DISTINCT FROM ($5, $7::jsonb, $8) THEN NULL ELSE next_fire_at END
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
  };
}
export type TriggersRepository = ReturnType<typeof createTriggersRepository>;
