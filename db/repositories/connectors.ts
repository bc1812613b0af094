import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

import type { ConnectorType } from '../../lib/resource-types';

export type { ConnectorType };

export interface ConnectorRow {
  id: string;
  account_id: string;
  agent_id: string;
  type: ConnectorType;
  name: string;
  /** Secret values inside are sealed (lib/secrets.ts). */
  config_json: Record<string, unknown>;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Writable columns and the connector field each comes from. */
export interface ConnectorValues {
  type: ConnectorType;
  name: string;
  configJson: Record<string, unknown>;
  enabled: boolean;
}

const COLUMNS = `id, account_id, agent_id, type, name, config_json, enabled, created_at, updated_at`;

const isForeignKeyViolation = (err: unknown) => (err as { code?: string }).code === '23503';

export function createConnectorsRepository(db: Queryable) {
  return {
    /** Null when the agent is not (or no longer) the account's: the foreign key is on (agent_id, account_id). */
    async insert(accountId: string, agentId: string, v: ConnectorValues, q: Queryable = db): Promise<ConnectorRow | null> {
      try {
        const { rows } = await q.query<ConnectorRow>(
          `INSERT INTO connectors (account_id, agent_id, type, name, config_json, enabled)
           VALUES ($1, $2, $3, $4, $5, $6)
           RETURNING ${COLUMNS}`,
          [accountId, agentId, v.type, v.name, JSON.stringify(v.configJson), v.enabled],
        );
        return rows[0]!;
      } catch (err) {
        if (isForeignKeyViolation(err)) return null;
        throw err;
      }
    },

    async findById(accountId: string, id: string, q: Queryable = db): Promise<ConnectorRow | null> {
      const { rows } = await q.query<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors WHERE id = $1 AND account_id = $2`, [id, accountId]);
      return rows[0] ?? null;
    },

    async findByIdForUpdate(accountId: string, id: string, q: Queryable): Promise<ConnectorRow | null> {
      const { rows } = await q.query<ConnectorRow>(
        `SELECT ${COLUMNS} FROM connectors WHERE id = $1 AND account_id = $2 FOR UPDATE`,
        [id, accountId],
      );
      return rows[0] ?? null;
    },

    async listByAgent(accountId: string, agentId: string, page: PageRequest, q: Queryable = db): Promise<Page<ConnectorRow>> {
      const k = keysetTail(page, 3);
      const { rows } = await q.query<ConnectorRow & { page_created_at: string }>(
        `SELECT ${COLUMNS}, ${PAGE_KEY_COLUMNS} FROM connectors WHERE agent_id = $1 AND account_id = $2 ${k.where} ${k.tail}`,
        [agentId, accountId, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    async update(accountId: string, id: string, v: ConnectorValues, q: Queryable = db): Promise<ConnectorRow | null> {
      const { rows } = await q.query<ConnectorRow>(
        `UPDATE connectors SET type = $3, name = $4, config_json = $5, enabled = $6, updated_at = now()
         WHERE id = $1 AND account_id = $2
         RETURNING ${COLUMNS}`,
        [id, accountId, v.type, v.name, JSON.stringify(v.configJson), v.enabled],
      );
      return rows[0] ?? null;
    },

    async delete(accountId: string, id: string, q: Queryable = db): Promise<boolean> {
      const { rowCount } = await q.query(`DELETE FROM connectors WHERE id = $1 AND account_id = $2`, [id, accountId]);
      return rowCount === 1;
    },
  };
}
export type ConnectorsRepository = ReturnType<typeof createConnectorsRepository>;
