import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

import type { ToolType } from '../../lib/resource-types';

export type { ToolType };

export interface ToolRow {
  id: string;
  account_id: string;
  agent_id: string;
  type: ToolType;
  name: string;
  description: string;
  /** Secret header values inside are sealed (lib/secrets.ts). */
  config_json: Record<string, unknown>;
  enabled: boolean;
  /** A model's call of it waits for a person's decision first (docs/api.md § Approvals). */
  requires_approval: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Writable columns and the tool field each comes from. */
export interface ToolValues {
  type: ToolType;
  name: string;
  description: string;
  configJson: Record<string, unknown>;
  enabled: boolean;
  /** Default false. */
  requiresApproval?: boolean;
}

const COLUMNS = `id, account_id, agent_id, type, name, description, config_json, enabled, requires_approval, created_at, updated_at`;

const isForeignKeyViolation = (err: unknown) => (err as { code?: string }).code === '23503';

export function createToolsRepository(db: Queryable) {
  return {
    /** Null when the agent is not (or no longer) the account's: the foreign key is on (agent_id, account_id). */
    async insert(accountId: string, agentId: string, v: ToolValues, q: Queryable = db): Promise<ToolRow | null> {
      try {
        const { rows } = await q.query<ToolRow>(
          `INSERT INTO tools (account_id, agent_id, type, name, description, config_json, enabled, requires_approval)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           RETURNING ${COLUMNS}`,
          [accountId, agentId, v.type, v.name, v.description, JSON.stringify(v.configJson), v.enabled, v.requiresApproval ?? false],
        );
        return rows[0]!;
      } catch (err) {
        if (isForeignKeyViolation(err)) return null;
        throw err;
      }
    },

    async findById(accountId: string, id: string, q: Queryable = db): Promise<ToolRow | null> {
      const { rows } = await q.query<ToolRow>(`SELECT ${COLUMNS} FROM tools WHERE id = $1 AND account_id = $2`, [id, accountId]);
      return rows[0] ?? null;
    },

    async findByIdForUpdate(accountId: string, id: string, q: Queryable): Promise<ToolRow | null> {
      const { rows } = await q.query<ToolRow>(`SELECT ${COLUMNS} FROM tools WHERE id = $1 AND account_id = $2 FOR UPDATE`, [id, accountId]);
      return rows[0] ?? null;
    },

    async listByAgent(accountId: string, agentId: string, page: PageRequest, q: Queryable = db): Promise<Page<ToolRow>> {
      const k = keysetTail(page, 3);
      const { rows } = await q.query<ToolRow & { page_created_at: string }>(
        `SELECT ${COLUMNS}, ${PAGE_KEY_COLUMNS} FROM tools WHERE agent_id = $1 AND account_id = $2 ${k.where} ${k.tail}`,
        [agentId, accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    /** What a run calls: the agent's enabled tools in created order. */
    async listEnabledForAgent(agentId: string, q: Queryable = db): Promise<ToolRow[]> {
      const { rows } = await q.query<ToolRow>(`SELECT ${COLUMNS} FROM tools WHERE agent_id = $1 AND enabled ORDER BY created_at, id`, [agentId]);
      return rows;
    },

    async update(accountId: string, id: string, v: ToolValues, q: Queryable = db): Promise<ToolRow | null> {
      const { rows } = await q.query<ToolRow>(
        `UPDATE tools SET type = $3, name = $4, description = $5, config_json = $6, enabled = $7, requires_approval = $8, updated_at = now()
         WHERE id = $1 AND account_id = $2
         RETURNING ${COLUMNS}`,
        [id, accountId, v.type, v.name, v.description, JSON.stringify(v.configJson), v.enabled, v.requiresApproval ?? false],
      );
      return rows[0] ?? null;
    },

    async delete(accountId: string, id: string, q: Queryable = db): Promise<boolean> {
      const { rowCount } = await q.query(`DELETE FROM tools WHERE id = $1 AND account_id = $2`, [id, accountId]);
      return rowCount === 1;
    },
  };
}
export type ToolsRepository = ReturnType<typeof createToolsRepository>;
