import type { Queryable } from '../pool';

/**
 * Retention's deletes (docs/operations.md § Retention). Each call deletes one batch of at most `limit` rows, oldest
 * first, in one statement, so in its own short transaction. The same shape throughout, built from one
 * line of EXPIRING (`expiring`):
 *
 *   DELETE FROM t WHERE <key> IN (SELECT <key> FROM t WHERE <time> < $1 [AND <final>] ORDER BY <time> LIMIT $2 FOR UPDATE SKIP LOCKED)
 *
 * and, for rows whose delete cascades into many (deliveries, recoveries), the batch bounded by the sum of
 * a count column (`bound`). Three rules are their own statements: events (none may be referred to by a
 * delivery), refresh tokens (two times) and thread messages (their agent's memory).
 *
 * - the inner SELECT uses the index of migration 8 (or 11, 16) and stops after `limit` rows;
 * - FOR UPDATE re-checks the condition on the row's newest version before it is deleted (a delivery a
 *   manual retry has just made pending again is not taken), and SKIP LOCKED never waits for a row a
 *   request holds: that row is left for the next run, and no request waits long for retention;
 * - only rows in a final state are deleted, whatever their age: a `pending` delivery, a `queued` or
 *   `running` run, and an event a remaining delivery refers to stay.
 * Each takes its cutoff as a time: the caller reads the database's clock once (`now()`, the clock every
 * other comparison of these columns uses) and derives every cutoff from it, so the rows a series of
 * batches can take are fixed when it starts, and it ends even while new rows keep passing the cutoff.
 * Each returns how many rows it deleted.
 */
/** Where a kind of row keeps the time it expires by, and what else must hold for it to go. */
interface Expiring {
  table: string;
  /** The key the outer DELETE matches (a column, or a row of columns). */
  key: string;
  /** The time compared with the cutoff, and the order of a batch. */
  time: string;
  /** `<`: older than the cutoff; `<=`: ended by it. */
  op: '<' | '<=';
  /** The final states a row must be in (none: any). */
  final?: readonly string[];
  /** A column counting what the row's delete cascades into: a batch stops when their sum reaches the caller's bound. */
  bound?: string;
}

/** The index of migration 8 (or 11, 16) behind each line's time; `account_usage_days` has none on `day` (the table is read: one row per account and day). */
const EXPIRING = {
  deliveries: { table: 'deliveries', key: 'id', time: 'created_at', op: '<', final: ['succeeded', 'failed', 'cancelled'], bound: 'attempts' },
  fires: { table: 'fires', key: 'id', time: 'created_at', op: '<' },
  runs: { table: 'runs', key: 'id', time: 'created_at', op: '<', final: ['succeeded', 'failed'] },
  hookReceipts: { table: 'hook_receipts', key: '(webhook_id, message_id)', time: 'created_at', op: '<' },
  idempotencyKeys: { table: 'idempotency_keys', key: '(caller_id, key)', time: 'created_at', op: '<' },
  rateLimits: { table: 'auth_rate_limits', key: 'key', time: 'reset_at', op: '<=' },
  missedFires: { table: 'trigger_missed_fires', key: '(trigger_id, scheduled_at)', time: 'created_at', op: '<' },
  scheduleCorrections: { table: 'schedule_corrections', key: 'id', time: 'created_at', op: '<' },
  recoveries: { table: 'delivery_recoveries', key: 'id', time: 'created_at', op: '<', final: ['completed', 'failed'], bound: 'attempted' },
  scheduleVersions: { table: 'trigger_schedule_history', key: 'id', time: 'valid_until', op: '<' },
  usageDays: { table: 'account_usage_days', key: '(account_id, day)', time: 'day', op: '<' },
} as const satisfies Record<string, Expiring>;

/** The one statement of a line of EXPIRING: $1 the cutoff, $2 the batch's size, $3 (with `bound`) the bound. */
function expiring(e: Expiring): string {
  const final = e.final ? ` AND status IN (${e.final.map((s) => `'${s}'`).join(', ')})` : '';
  const old = `${e.time} ${e.op} $1${final}`;
  const columns = e.key.replace(/^\((.*)\)$/, '$1');
  if (!e.bound) {
    return `DELETE FROM ${e.table} WHERE ${e.key} IN (
           SELECT ${columns} FROM ${e.table} WHERE ${old}
           ORDER BY ${e.time} LIMIT $2
           FOR UPDATE SKIP LOCKED)`;
  }
  return `WITH candidates AS (
           SELECT ${columns}, ${e.time}, ${e.bound} FROM ${e.table}
           WHERE ${old}
           ORDER BY ${e.time} LIMIT $2
           FOR UPDATE SKIP LOCKED
         ), bounded AS (
           SELECT ${columns}, sum(${e.bound}) OVER (ORDER BY ${e.time}, ${columns}) - ${e.bound} AS before_it FROM candidates
         )
         DELETE FROM ${e.table} WHERE ${e.key} IN (SELECT ${columns} FROM bounded WHERE before_it < $3)`;
}

/** Each line's statement, built once. */
const STATEMENTS = Object.fromEntries(Object.entries(EXPIRING).map(([name, e]) => [name, expiring(e)])) as Record<keyof typeof EXPIRING, string>;

export function createRetentionRepository(db: Queryable) {
  const deleted = async (sql: string, params: unknown[]) => (await db.query(sql, params)).rowCount ?? 0;
  const expire = (line: keyof typeof EXPIRING, cutoff: Date | string, limit: number, bound?: number) =>
    deleted(STATEMENTS[line], bound === undefined ? [cutoff, limit] : [cutoff, limit, bound]);

  return {
    /** The database's clock, from which the cutoffs are derived. */
    async now(): Promise<Date> {
      const { rows } = await db.query<{ now: Date }>(`SELECT now() AS now`);
      return rows[0]!.now;
    },

    /**
     * Finished deliveries created before `before`, with their attempts (ON DELETE CASCADE). A delivery has one
     * attempt per delay of the retry schedule per generation, more after manual retries: a batch takes
     * deliveries until their `attempts` add up to `maxAttempts` (at least one delivery), so the cascade
     * is bounded too.
     */
    deleteFinishedDeliveries: (before: Date, limit: number, maxAttempts: number) => expire('deliveries', before, limit, maxAttempts),

    /** Fires recorded before `before`. Nothing refers to a fire (a run keeps its fire id as a plain value). */
    deleteFires: (before: Date, limit: number) => expire('fires', before, limit),

    /**
     * Runs created before `before` that have ended (`succeeded`, `failed`); `queued` and
     * `running` ones stay, whatever their age. A fire that still refers to one loses its `runId`
     * (ON DELETE SET NULL, indexed); what belongs to a run alone (its steps) goes with it (CASCADE), which
     * is why run batches are smaller than the others.
     */
    deleteFinishedRuns: (before: Date, limit: number) => expire('runs', before, limit),

    /**
     * Events created before `before` that no delivery refers to any more (finished deliveries were deleted
     * before: see lib/retention.ts), so the cascade into deliveries is empty and an event with a pending
     * delivery stays. Fires that refer to one lose their `eventId` (ON DELETE SET NULL, indexed).
     * `OFFSET 0` keeps the NOT EXISTS a per-row probe of deliveries' (event_id, webhook_id) index while
     * events are walked oldest first: as an anti-join the planner would hash both tables on every batch.
     */
    deleteUndeliveredEvents(before: Date, limit: number): Promise<number> {
      return deleted(
        `DELETE FROM events WHERE id IN (
           SELECT e.id FROM events e
           WHERE e.created_at < $1
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id OFFSET 0)
           ORDER BY e.created_at LIMIT $2
           FOR UPDATE OF e SKIP LOCKED)`,
        [before, limit],
      );
    },

    /** Receipts of signed incoming webhook requests received before `before`. */
    deleteHookReceipts: (before: Date, limit: number) => expire('hookReceipts', before, limit),

    /**
     * Idempotency records created before `before` (24 h ago): no longer replayed (a claim of the same key takes them
     * over), so nothing reads them. One a request is taking over right now is locked, and skipped.
     */
    deleteIdempotencyKeys: (before: Date, limit: number) => expire('idempotencyKeys', before, limit),

    /**
     * Rate-limit counters (`auth_rate_limits`: auth addresses, login emails and every other counter kept
     * there) whose window had ended by `asOf`: the next hit would start a new window at 1 anyway.
     */
    deleteEndedRateLimits: (asOf: Date, limit: number) => expire('rateLimits', asOf, limit),

    /**
     * Refresh tokens that can no longer do anything: expired or revoked by `asOf`. Presenting one answers the same
     * 401 whether it exists or not, and a revoked family is revoked whole (under its lock), so no token of
     * it can be rotated again. Rotated tokens that have not expired stay: presenting one is how a leak is
     * detected (the family is then revoked), so it must exist until it expires.
     */
    deleteDeadRefreshTokens(asOf: Date, limit: number): Promise<number> {
      return deleted(
        `DELETE FROM refresh_tokens WHERE id IN (
           SELECT id FROM refresh_tokens WHERE expires_at <= $1 OR revoked_at <= $1
           LIMIT $2
           FOR UPDATE SKIP LOCKED)`,
        [asOf, limit],
      );
    },

    /**
     * Missed schedule times recorded before `before` (one row per trigger and time, so that each emitted
     * trigger.missed once). The search for missed fires judges each time once, a catch-up window plus
     * MISSED_FIRE_GRACE_MS after it, so nothing looks the row up again once it is older than that.
     */
    deleteMissedFires: (before: Date, limit: number) => expire('missedFires', before, limit),

    /** Corrections the reconciler's sweep made before `before` (expected fires are judged within RETENTION_DAYS only). */
    deleteScheduleCorrections: (before: Date, limit: number) => expire('scheduleCorrections', before, limit),

    /**
     * Finished recoveries (`completed`, `failed`) asked for before `before`, with their items (ON DELETE
     * CASCADE); a `running` one stays, whatever its age. Most items have gone already with their deliveries
     * (created before the recovery, so older still); as with deliveries, a batch takes recoveries until the
     * items they started (`attempted`) add up to `maxItems` (at least one recovery).
     */
    deleteFinishedRecoveries: (before: Date, limit: number, maxItems: number) => expire('recoveries', before, limit, maxItems),

    /**
     * Thread messages said before `before` (RETENTION_DAYS ago, like the runs that made them) that their
     * agent's memory no longer reaches either (older than its `memoryConfig.ttlMinutes` as of `asOf`): the
     * model is never sent one, and a memory longer than RETENTION_DAYS keeps what it remembers.
     */
    deleteOldThreadMessages(before: Date, asOf: Date, limit: number): Promise<number> {
      return deleted(
        `DELETE FROM thread_messages WHERE id IN (
           SELECT m.id FROM thread_messages m JOIN agents a ON a.id = m.agent_id
           WHERE m.created_at < $1
             AND m.created_at < $2::timestamptz - interval '1 minute' *
               CASE WHEN jsonb_typeof(a.memory_config -> 'ttlMinutes') = 'number' THEN (a.memory_config ->> 'ttlMinutes')::numeric ELSE 0 END
           ORDER BY m.created_at LIMIT $3
           FOR UPDATE OF m SKIP LOCKED)`,
        [before, asOf, limit],
      );
    },

    /**
     * Versions of a trigger's schedule that ended before `before` (the next version began before it): the
     * version in force at `before`, and every later one, stay, so expected fires (asked for within
     * RETENTION_DAYS) still find the version in force at each time they judge. The partial index of
     * migration 16 holds only ended versions.
     */
    deleteEndedScheduleVersions: (before: Date, limit: number) => expire('scheduleVersions', before, limit),

    /**
     * An account's days of use (`account_usage_days`: runs, tokens, tool calls; `GET /api/account/usage`) of UTC days
     * before the day of `before` (USAGE_RETENTION_DAYS ago). Today's row, which MODEL_TOKENS_PER_DAY reads,
     * is never among them.
     */
    deleteOldUsageDays: (before: Date, limit: number) => expire('usageDays', before.toISOString().slice(0, 10), limit),
  };
}
export type RetentionRepository = ReturnType<typeof createRetentionRepository>;
