import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '../../db/pool';

/** Where each seeded row is found: table, key column, and the key. */
interface Seeded {
  table: string;
  column: string;
  key: string;
}

/**
 * Rows on both sides of every retention rule (docs/operations.md § Retention), written with the timestamps they would
 * have had: `old` is a day past `days`, `young` a day short of it. `gone` are those one retention run must
 * delete, `kept` those it must leave, by name; `present(names)` says which still exist.
 */
export async function seedRetentionRows(db: Db, days: number) {
  const id = () => randomUUID();
  const old = `now() - make_interval(days => ${days + 1})`;
  const young = `now() - make_interval(days => ${days - 1})`;
  const rows = new Map<string, Seeded>();
  const at = (name: string, table: string, column: string, key: string) => {
    rows.set(name, { table, column, key });
    return key;
  };

  const userId = id();
  const accountId = id();
  const agentId = id();
  const outgoing = id();
  const incoming = id();
  const triggerId = id();
  await db.query(`INSERT INTO users (id, email, password_hash) VALUES ($1, $2, 'x')`, [userId, `${userId}@example.com`]);
  await db.query(`INSERT INTO accounts (id, owner_user_id, name, balance) VALUES ($1, $2, 'retention', 0)`, [accountId, userId]);
  await db.query(`INSERT INTO agents (id, account_id, name, memory_config) VALUES ($1, $2, 'a', '{}')`, [agentId, accountId]);
  await db.query(
    `INSERT INTO webhooks (id, account_id, name, direction, url, events) VALUES
       ($1, $3, 'out', 'outgoing', 'http://127.0.0.1:1/hook', ARRAY['*']), ($2, $3, 'in', 'incoming', NULL, ARRAY['webhook.received'])`,
    [outgoing, incoming, accountId],
  );
  await db.query(
    `INSERT INTO triggers (id, account_id, scope, type, name, config_json) VALUES ($1, $2, 'user', 'webhook', 't', $3)`,
    [triggerId, accountId, { webhookPath: `retention-${triggerId}` }],
  );

  const event = async (name: string, when: string) => {
    const key = at(name, 'events', 'id', id());
    await db.query(`INSERT INTO events (id, account_id, type, data, created_at) VALUES ($1, $2, 'trigger.fired', '{}', ${when})`, [key, accountId]);
    return key;
  };
  const delivery = async (name: string, when: string, status: string, attempts: number) => {
    const eventId = await event(`event of ${name}`, when);
    const key = at(name, 'deliveries', 'id', id());
    await db.query(
      `INSERT INTO deliveries (id, account_id, webhook_id, event_id, status, attempts, created_at) VALUES ($1, $2, $3, $4, $5, $6, ${when})`,
      [key, accountId, outgoing, eventId, status, attempts],
    );
    for (let attempt = 1; attempt <= attempts; attempt++) {
      at(`${name} attempt ${attempt}`, 'delivery_attempts', `delivery_id::text || '/' || attempt`, `${key}/${attempt}`);
      await db.query(
        `INSERT INTO delivery_attempts (delivery_id, generation, attempt, status_code, duration_ms, created_at) VALUES ($1, 0, $2, 500, 1, ${when})`,
        [key, attempt],
      );
    }
    return key;
  };
  const run = async (name: string, when: string, status: string) => {
    const key = at(name, 'runs', 'id', id());
    await db.query(
      `INSERT INTO runs (id, account_id, agent_id, status, created_at) VALUES ($1, $2, $3, $4, ${when})`,
      [key, accountId, agentId, status],
    );
    return key;
  };
  const fire = async (name: string, when: string, links: { runId?: string; eventId?: string } = {}) => {
    const key = at(name, 'fires', 'id', id());
    await db.query(
      `INSERT INTO fires (id, account_id, trigger_id, fire_key, source, status, run_id, event_id, created_at)
       VALUES ($1, $2, $3, $4, 'manual', 'fired', $5, $6, ${when})`,
      [key, accountId, triggerId, `manual-${key}`, links.runId ?? null, links.eventId ?? null],
    );
    return key;
  };

  await delivery('old succeeded delivery', old, 'succeeded', 2);
  await delivery('old failed delivery', old, 'failed', 3);
  await delivery('old cancelled delivery', old, 'cancelled', 0);
  await delivery('old pending delivery', old, 'pending', 1);
  await delivery('young succeeded delivery', young, 'succeeded', 1);
  const oldEvent = await event('old event', old);
  await event('young event', young);

  const oldRun = await run('old succeeded run', old, 'succeeded');
  await run('old failed run', old, 'failed');
  await run('old queued run', old, 'queued');
  await run('old running run', old, 'running');
  await run('young succeeded run', young, 'succeeded');

  await fire('old fire', old, { runId: oldRun, eventId: oldEvent });
  // Young fires that refer to an old run or event lose the link (SET NULL), and stay.
  await fire('young fire', young, { runId: oldRun, eventId: oldEvent });

  for (const [name, when] of [['old hook receipt', old], ['young hook receipt', young]] as const) {
    const key = at(name, 'hook_receipts', 'message_id', `msg_${id()}`);
    await db.query(`INSERT INTO hook_receipts (webhook_id, message_id, event_ids, created_at) VALUES ($1, $2, '{}', ${when})`, [incoming, key]);
  }
  for (const [name, hours] of [['idempotency key of 25 h', 25], ['idempotency key of 23 h', 23]] as const) {
    const key = at(name, 'idempotency_keys', 'key', id());
    await db.query(
      `INSERT INTO idempotency_keys (caller_id, key, request_hash, status_code, response_body, created_at)
       VALUES ($1, $2, 'h', 201, '{}', now() - make_interval(hours => $3))`,
      [userId, key, hours],
    );
  }
  for (const [name, resetIn] of [['ended rate limit', '-1 second'], ['live rate limit', '10 minutes']] as const) {
    const key = at(name, 'auth_rate_limits', 'key', `test:${id()}`);
    await db.query(`INSERT INTO auth_rate_limits (key, hits, reset_at) VALUES ($1, 3, now() + $2::interval)`, [key, resetIn]);
  }
  const familyId = id();
  const tokens = [
    ['expired refresh token', '-1 second', null, null],
    ['revoked refresh token', '10 days', null, 'now()'],
    ['rotated refresh token', '10 days', 'now()', null],
    ['active refresh token', '20 days', null, null],
  ] as const;
  for (const [name, expiresIn, rotated, revoked] of tokens) {
    const key = at(name, 'refresh_tokens', 'token_hash', createHash('sha256').update(name + familyId).digest('hex'));
    await db.query(
      `INSERT INTO refresh_tokens (user_id, family_id, token_hash, expires_at, rotated_at, revoked_at)
       VALUES ($1, $2, $3, now() + $4::interval, ${rotated ?? 'NULL'}, ${revoked ?? 'NULL'})`,
      [userId, familyId, key, expiresIn],
    );
  }

  for (const [name, when] of [['old missed fire', old], ['young missed fire', young]] as const) {
    const key = at(name, 'trigger_missed_fires', 'event_id', id());
    await db.query(`INSERT INTO trigger_missed_fires (trigger_id, scheduled_at, event_id, created_at) VALUES ($1, ${when}, $2, ${when})`, [triggerId, key]);
  }
  for (const [name, when] of [['old schedule correction', old], ['young schedule correction', young]] as const) {
    const key = at(name, 'schedule_corrections', 'trigger_id', id());
    await db.query(`INSERT INTO schedule_corrections (trigger_id, reason, created_at) VALUES ($1, 'missing', ${when})`, [key]);
  }
  // Recoveries of the outgoing webhook; the old completed one started an item (of a young delivery, so the
  // item goes with its recovery, not with its delivery).
  const youngDelivery = rows.get('young succeeded delivery')!.key;
  const recoveries = [
    ['old completed recovery', old, 'completed'],
    ['old failed recovery', old, 'failed'],
    ['old running recovery', old, 'running'],
    ['young completed recovery', young, 'completed'],
  ] as const;
  for (const [name, when, status] of recoveries) {
    const key = at(name, 'delivery_recoveries', 'id', id());
    await db.query(
      `INSERT INTO delivery_recoveries (id, account_id, webhook_id, since, until, status, total, attempted, created_at)
       VALUES ($1, $2, $3, ${when} - interval '1 day', ${when}, $4, 1, $5, ${when})`,
      [key, accountId, outgoing, status, name === 'old completed recovery' ? 1 : 0],
    );
  }
  const recovered = rows.get('old completed recovery')!.key;
  at('old completed recovery item', 'delivery_recovery_items', `recovery_id::text || '/' || delivery_id`, `${recovered}/${youngDelivery}`);
  await db.query(`INSERT INTO delivery_recovery_items (recovery_id, delivery_id, generation) VALUES ($1, $2, 0)`, [recovered, youngDelivery]);

  // Thread messages: of an agent without a memory ttl (`agentId`), and of one that remembers 5 days longer
  // than `days`: its old message is still remembered, one older than its memory goes.
  const longMemory = id();
  await db.query(`INSERT INTO agents (id, account_id, name, memory_config) VALUES ($1, $2, 'long memory', $3)`, [
    longMemory, accountId, { type: 'conversation', maxMessages: 50, ttlMinutes: (days + 5) * 1440 },
  ]);
  const messages = [
    ['old thread message', agentId, old],
    ['young thread message', agentId, young],
    ['old thread message of a long memory', longMemory, old],
    ['thread message older than a long memory', longMemory, `now() - make_interval(days => ${days + 6})`],
  ] as const;
  for (const [name, agent, when] of messages) {
    const key = at(name, 'thread_messages', 'id', id());
    await db.query(
      `INSERT INTO thread_messages (id, account_id, agent_id, thread_id, role, content, created_at) VALUES ($1, $2, $3, 't', 'user', 'hi', ${when})`,
      [key, accountId, agent],
    );
  }

  // Versions of a schedule (written here by hand; the database writes them for cron and schedule triggers):
  // one that ended before the horizon, the one in force at it, and the one in force now.
  const versions = [
    ['schedule version ended before the horizon', days + 3, days + 2],
    ['schedule version in force at the horizon', days + 2, days - 1],
    ['schedule version in force now', days - 1, null],
  ] as const;
  for (const [name, from, until] of versions) {
    const { rows: inserted } = await db.query<{ id: string }>(
      `INSERT INTO trigger_schedule_history (trigger_id, valid_from, valid_until, type, enabled, cron_expression)
       VALUES ($1, now() - make_interval(days => $2), now() - make_interval(days => $3), 'cron', true, '0 * * * *') RETURNING id::text`,
      [triggerId, from, until],
    );
    at(name, 'trigger_schedule_history', 'id::text', inserted[0]!.id);
  }

  const gone = [
    'old succeeded delivery', 'old succeeded delivery attempt 1', 'old succeeded delivery attempt 2',
    'old failed delivery', 'old failed delivery attempt 1', 'old failed delivery attempt 2', 'old failed delivery attempt 3',
    'old cancelled delivery',
    'event of old succeeded delivery', 'event of old failed delivery', 'event of old cancelled delivery', 'old event',
    'old succeeded run', 'old failed run',
    'old fire',
    'old hook receipt',
    'idempotency key of 25 h',
    'ended rate limit',
    'expired refresh token', 'revoked refresh token',
    'old missed fire',
    'old schedule correction',
    'old completed recovery', 'old completed recovery item', 'old failed recovery',
    'old thread message', 'thread message older than a long memory',
    'schedule version ended before the horizon',
  ];
  const kept = [...rows.keys()].filter((name) => !gone.includes(name));

  /** Which of `names` still exist. */
  async function present(names: string[] = [...rows.keys()]): Promise<string[]> {
    const found: string[] = [];
    for (const name of names) {
      const row = rows.get(name);
      if (!row) throw new Error(`no seeded row named ${name}`);
      const { rowCount } = await db.query(`SELECT 1 FROM ${row.table} WHERE ${row.column} = $1`, [row.key]);
      if (rowCount) found.push(name);
    }
    return found;
  }

  /** The run and event ids the young fire still refers to. */
  async function youngFireLinks(): Promise<{ run_id: string | null; event_id: string | null }> {
    const { rows: links } = await db.query(`SELECT run_id, event_id FROM fires WHERE id = $1`, [rows.get('young fire')!.key]);
    return links[0];
  }

  return { gone, kept, present, youngFireLinks, key: (name: string) => rows.get(name)!.key };
}
