import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

export type AgentStatus = 'draft' | 'active' | 'paused' | 'template';
export type Policy = string | Record<string, unknown>;
export interface MemoryConfig {
  type: 'conversation' | 'summary' | 'vector' | 'none';
  maxMessages: number;
  ttlMinutes: number;
}
export interface AgentGraph {
  nodes: { id: string; type: string; data?: Record<string, unknown> }[];
  edges: { id?: string; source: string; target: string }[];
}

export interface AgentRow {
  id: string;
  account_id: string;
  name: string;
  description: string;
  goal: string;
  persona: string;
  voice: string;
  system_prompt: string;
  policies: Policy[];
  memory_config: MemoryConfig;
  config_json: Record<string, unknown>;
  status: AgentStatus;
  graph: AgentGraph;
  created_at: Date;
  updated_at: Date;
}

/** Writable columns and the agent field each comes from. */
export interface AgentValues {
  name: string;
  description: string;
  goal: string;
  persona: string;
  voice: string;
  systemPrompt: string;
  policies: Policy[];
  memoryConfig: MemoryConfig;
  configJson: Record<string, unknown>;
  status: AgentStatus;
  graph: AgentGraph;
}

const COLUMNS = `id, account_id, name, description, goal, persona, voice, system_prompt, policies,
  memory_config, config_json, status, graph, created_at, updated_at`;

export function createAgentsRepository(db: Queryable) {
  return {
    async insert(accountId: string, v: AgentValues, q: Queryable = db): Promise<AgentRow> {
      const { rows } = await q.query<AgentRow>(
        `INSERT INTO agents (account_id, name, description, goal, persona, voice, system_prompt, policies,
           memory_config, config_json, status, graph)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         RETURNING ${COLUMNS}`,
        [
          accountId, v.name, v.description, v.goal, v.persona, v.voice, v.systemPrompt, JSON.stringify(v.policies),
          JSON.stringify(v.memoryConfig), JSON.stringify(v.configJson), v.status, JSON.stringify(v.graph),
        ],
      );
      return rows[0]!;
    },

    async findById(accountId: string, id: string, q: Queryable = db): Promise<AgentRow | null> {
      const { rows } = await q.query<AgentRow>(
        `SELECT ${COLUMNS} FROM agents WHERE id = $1 AND account_id = $2`,
        [id, accountId],
      );
      return rows[0] ?? null;
    },

    async findByIdForUpdate(accountId: string, id: string, q: Queryable): Promise<AgentRow | null> {
      const { rows } = await q.query<AgentRow>(
        `SELECT ${COLUMNS} FROM agents WHERE id = $1 AND account_id = $2 FOR UPDATE`,
        [id, accountId],
      );
      return rows[0] ?? null;
    },

    /**
     * A page of the account's agents, newest first; `filter.text` keeps those whose name or description
     * contains it (any case, as plain text: no LIKE patterns), `filter.status` those with that status.
     */
    async list(accountId: string, page: PageRequest, filter: { text?: string; status?: string } = {}, q: Queryable = db): Promise<Page<AgentRow>> {
      const k = keysetTail(page, 4);
      const { rows } = await q.query<AgentRow & { page_created_at: string }>(
        `SELECT ${COLUMNS}, ${PAGE_KEY_COLUMNS} FROM agents
         WHERE account_id = $1
           AND ($2::text IS NULL OR strpos(lower(name), lower($2)) > 0 OR strpos(lower(description), lower($2)) > 0)
           AND ($3::text IS NULL OR status = $3)
           ${k.where} ${k.tail}`,
        [accountId, filter.text ?? null, filter.status ?? null, ...k.params],
      );
      return toPage(rows, page.limit, (r) => r);
    },

    async update(accountId: string, id: string, v: AgentValues, q: Queryable = db): Promise<AgentRow | null> {
      const { rows } = await q.query<AgentRow>(
        `UPDATE agents SET name = $3, description = $4, goal = $5, persona = $6, voice = $7, system_prompt = $8,
           policies = $9, memory_config = $10, config_json = $11, status = $12, graph = $13, updated_at = now()
         WHERE id = $1 AND account_id = $2
         RETURNING ${COLUMNS}`,
        [
          id, accountId, v.name, v.description, v.goal, v.persona, v.voice, v.systemPrompt, JSON.stringify(v.policies),
          JSON.stringify(v.memoryConfig), JSON.stringify(v.configJson), v.status, JSON.stringify(v.graph),
        ],
      );
      return rows[0] ?? null;
    },

    /**
     * Call inside a transaction. Agent triggers go with their agent; connectors and tools cascade, and
     * the foreign key unlinks user triggers (ON DELETE SET NULL (agent_id)).
     */
    async delete(accountId: string, id: string, q: Queryable): Promise<boolean> {
      // Lock first, so an agent trigger inserted concurrently waits and then fails its foreign key
      // instead of being orphaned by ON DELETE SET NULL.
      const locked = await q.query(`SELECT 1 FROM agents WHERE id = $1 AND account_id = $2 FOR UPDATE`, [id, accountId]);
      if (locked.rowCount !== 1) return false;
      await q.query(`DELETE FROM triggers WHERE agent_id = $1 AND account_id = $2 AND scope = 'agent'`, [id, accountId]);
      const { rowCount } = await q.query(`DELETE FROM agents WHERE id = $1 AND account_id = $2`, [id, accountId]);
      return rowCount === 1;
    },
  };
}
export type AgentsRepository = ReturnType<typeof createAgentsRepository>;
