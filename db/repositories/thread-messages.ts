import { keysetTail, PAGE_KEY_COLUMNS, toPage, type Page, type PageRequest } from '../paging';
import type { Queryable } from '../pool';

/** One message of a conversation thread. */
export interface ThreadMessageRow {
  id: string;
  account_id: string;
  agent_id: string;
  thread_id: string;
  run_id: string | null;
  role: 'user' | 'assistant';
  content: string;
  created_at: Date;
}

const COLUMNS = `id, account_id, agent_id, thread_id, run_id, role, content, created_at`;

export interface NewThreadMessage {
  role: 'user' | 'assistant';
  content: string;
  /** When it was said; default now. */
  createdAt?: Date;
}

/** The messages of agents' conversation threads. */
export function createThreadMessagesRepository(db: Queryable) {
  return {
    /** Adds a run's messages to its thread. */
    async insertThreadMessages(
      m: { accountId: string; agentId: string; threadId: string; runId: string; messages: NewThreadMessage[] },
      q: Queryable = db,
    ): Promise<void> {
      if (m.messages.length === 0) return;
      await q.query(
        `INSERT INTO thread_messages (account_id, agent_id, thread_id, run_id, role, content, created_at)
         SELECT $1, $2, $3, $4, x.role, x.content, coalesce(x.created_at, now())
           FROM jsonb_to_recordset($5::jsonb) AS x(role text, content text, created_at timestamptz)`,
        [m.accountId, m.agentId, m.threadId, m.runId, JSON.stringify(m.messages.map((x) => ({ role: x.role, content: x.content, created_at: x.createdAt ?? null })))],
      );
    },

    /**
     * What the model remembers of a thread: its newest `maxMessages` messages younger than `ttlMinutes`,
     * and of those the newest whose contents together hold at most `maxBytes` bytes (UTF-8; Postgres knows a
     * stored text's length without reading it), oldest first (the order they were said in). So a run never
     * reads more of its thread than the model may be sent (MODEL_CONTEXT_MAX_BYTES), however long it is.
     */
    async listThreadWindow(
      w: { agentId: string; threadId: string; maxMessages: number; ttlMinutes: number; maxBytes: number },
      q: Queryable = db,
    ): Promise<ThreadMessageRow[]> {
      const { rows } = await q.query<ThreadMessageRow>(
        `SELECT ${COLUMNS} FROM (
           SELECT ${COLUMNS}, sum(octet_length(content)) OVER (ORDER BY created_at DESC, id DESC) AS bytes_up_to FROM (
             SELECT ${COLUMNS} FROM thread_messages
              WHERE agent_id = $1 AND thread_id = $2 AND created_at > now() - $3::int * interval '1 minute'
              ORDER BY created_at DESC, id DESC LIMIT $4) AS newest
         ) AS sized
         WHERE bytes_up_to <= $5
         ORDER BY created_at, id`,
        [w.agentId, w.threadId, w.ttlMinutes, w.maxMessages, w.maxBytes],
      );
      return rows;
    },

    /** A thread's messages, newest first, one page. */
    async listThreadMessages(accountId: string, agentId: string, threadId: string, page: PageRequest, q: Queryable = db): Promise<Page<ThreadMessageRow>> {
      const k = keysetTail(page, 4);
      const { rows } = await q.query<ThreadMessageRow & { page_created_at: string }>(
        `SELECT ${COLUMNS}, ${PAGE_KEY_COLUMNS} FROM thread_messages
          WHERE agent_id = $1 AND account_id = $2 AND thread_id = $3 ${k.where} ${k.tail}`,
        [agentId, accountId, threadId, ...k.params],
      );
      return toPage(rows, page.limit, ({ page_created_at: _key, ...message }) => message);
    },
  };
}
export type ThreadMessagesRepository = ReturnType<typeof createThreadMessagesRepository>;
