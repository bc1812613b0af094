import type { Queryable } from '../pool';

export type RecoveryStatus = 'running' | 'completed' | 'failed';

/** A recovery with the outcomes so far of the generations it started. */
export interface RecoveryRow {
  id: string;
  account_id: string;
  webhook_id: string;
  since: Date;
  until: Date;
  status: RecoveryStatus;
  total: number;
  attempted: number;
  succeeded: number;
  failed: number;
  created_at: Date;
  completed_at: Date | null;
}

/** What a batch of a recovery works from (its row, locked). */
export interface RecoveryWork {
  id: string;
  account_id: string;
  webhook_id: string;
  status: RecoveryStatus;
}

/** A failed delivery a recovery gives a new generation. */
export interface RecoverableDelivery {
  id: string;
  /** As Postgres prints it (microseconds kept). */
  created_at: string;
}

const COLUMNS = `r.id, r.account_id, r.webhook_id, r.since, r.until, r.status, r.total, r.attempted, r.created_at, r.completed_at,
  (SELECT count(*) FILTER (WHERE d.status = 'succeeded')::int FROM delivery_recovery_items i
     JOIN deliveries d ON d.id = i.delivery_id AND d.generation = i.generation WHERE i.recovery_id = r.id) AS succeeded,
  (SELECT count(*) FILTER (WHERE d.status = 'failed')::int FROM delivery_recovery_items i
     JOIN deliveries d ON d.id = i.delivery_id AND d.generation = i.generation WHERE i.recovery_id = r.id) AS failed`;

/**
 * Whether a recovery re-sent the delivery `d` in the `ms` (an SQL parameter) before `asOf` (or since): a
 * condition on its items (delivery_recovery_items_delivery finds them).
 */
const RESENT_WITHIN = (d: string, asOf: string, ms: string) =>
  `EXISTS (SELECT 1 FROM delivery_recovery_items i WHERE i.delivery_id = ${d}.id AND i.recovered_at > ${asOf} - ${ms} * interval '1 millisecond')`;

/** The recoveries of a webhook's failed deliveries (docs/api.md § Webhooks; workflows/recovery.ts). */
export function createRecoveriesRepository(db: Queryable) {
  return {
    /**
     * A running recovery of the webhook's deliveries created in [since, until); `total` counts those failed now
     * and not re-sent by a recovery within the last `intervalMs` (a recovery retries only deliveries that had
     * failed when it was asked for, and none a recovery re-sent less than RECOVER_INTERVAL before: see nextBatch).
     */
    async create(
      q: Queryable,
      r: { accountId: string; webhookId: string; since: Date; until: Date; intervalMs: number; maxAttempts: number },
    ): Promise<RecoveryRow> {
      const { rows } = await q.query<{ id: string }>(
        `INSERT INTO delivery_recoveries (account_id, webhook_id, since, until, total)
         SELECT $1, $2, $3, $4, count(*)::int FROM deliveries d
         WHERE d.webhook_id = $2 AND d.status = 'failed' AND d.created_at >= $3 AND d.created_at < $4 AND d.attempts < $6
           AND NOT ${RESENT_WITHIN('d', 'now()', '$5')}
         RETURNING id`,
        [r.accountId, r.webhookId, r.since, r.until, r.intervalMs, r.maxAttempts],
      );
      return (await this.find(r.accountId, r.webhookId, rows[0]!.id, q))!;
    },

    /**
     * How long until the webhook may have its next recovery (RECOVER_INTERVAL after the last one was asked
     * for), in ms; 0 when it may now. Read under the webhook's row lock, so concurrent requests see each
     * other's recovery.
     */
    async msUntilNextRecovery(webhookId: string, intervalMs: number, q: Queryable = db): Promise<number> {
      const { rows } = await q.query<{ wait_ms: number }>(
        `SELECT coalesce(ceil(extract(epoch FROM max(created_at) + $2 * interval '1 millisecond' - now()) * 1000), 0)::bigint AS wait_ms
         FROM delivery_recoveries WHERE webhook_id = $1 AND created_at > now() - $2 * interval '1 millisecond'`,
        [webhookId, intervalMs],
      );
      return Math.max(0, rows[0]?.wait_ms ?? 0);
    },

    /**
     * Marks `failed` the webhook's recoveries still `running` though asked for at least `afterMs` ago: their
     * workflow is gone without a last word (terminated, Temporal's state lost, or it could not record its
     * failure). Their rows then read as what they are, retention can delete them, and they no longer hold
     * the webhook. A workflow still at work finds its recovery no longer running and stops.
     */
    async failStale(webhookId: string, afterMs: number, q: Queryable = db): Promise<void> {
      await q.query(
        `UPDATE delivery_recoveries SET status = 'failed', completed_at = now()
         WHERE webhook_id = $1 AND status = 'running' AND created_at <= now() - $2 * interval '1 millisecond'`,
        [webhookId, afterMs],
      );
    },

    /** The webhook's recovery still running (the newest), or null when there is none. */
    async findRunning(webhookId: string, q: Queryable = db): Promise<{ id: string } | null> {
      const { rows } = await q.query<{ id: string }>(
        `SELECT id FROM delivery_recoveries WHERE webhook_id = $1 AND status = 'running' ORDER BY created_at DESC LIMIT 1`,
        [webhookId],
      );
      return rows[0] ?? null;
    },

    async find(accountId: string, webhookId: string, id: string, q: Queryable = db): Promise<RecoveryRow | null> {
      const { rows } = await q.query<RecoveryRow>(
        `SELECT ${COLUMNS} FROM delivery_recoveries r WHERE r.id = $1 AND r.webhook_id = $2 AND r.account_id = $3`,
        [id, webhookId, accountId],
      );
      return rows[0] ?? null;
    },

    /**
     * The recovery's row for its next batch, locked when `lock` (take its webhook's row first: deleting a
     * webhook locks it, then its recoveries); null when it is gone (its webhook was deleted).
     */
    async findForWork(id: string, q: Queryable, lock = false): Promise<RecoveryWork | null> {
      const { rows } = await q.query<RecoveryWork>(
        `SELECT id, account_id, webhook_id, status FROM delivery_recoveries WHERE id = $1 ${lock ? 'FOR UPDATE' : ''}`,
        [id],
      );
      return rows[0] ?? null;
    },

    /**
     * The next `limit` deliveries to recover, after the cursor, oldest first, locked: created in the window,
     * failed, and failed already when the recovery was asked for (one failed or retried since is not
     * this recovery's to retry), and not re-sent by a recovery less than `intervalMs` before this one was
     * asked for (RECOVER_INTERVAL: a delivery is re-sent by at most one recovery per interval, however the
     * recoveries of its webhook follow each other), and not attempted `maxAttempts` times already (DELIVERY_MAX_ATTEMPTS).
     */
    async nextBatch(id: string, limit: number, intervalMs: number, maxAttempts: number, q: Queryable): Promise<RecoverableDelivery[]> {
      // Compared in SQL, never through a JS Date: timestamps keep microseconds, a Date only milliseconds.
      const { rows } = await q.query<RecoverableDelivery>(
        `SELECT d.id, d.created_at::text AS created_at FROM delivery_recoveries r
         JOIN deliveries d ON d.webhook_id = r.webhook_id AND d.status = 'failed' AND d.created_at >= r.since AND d.created_at < r.until
         WHERE r.id = $1 AND d.finished_at <= r.created_at AND d.attempts < $4
           AND (r.cursor_id IS NULL OR (d.created_at, d.id) > (r.cursor_created_at, r.cursor_id))
           AND NOT ${RESENT_WITHIN('d', 'r.created_at', '$3')}
         ORDER BY d.created_at, d.id LIMIT $2
         FOR UPDATE OF d`,
        [id, limit, intervalMs, maxAttempts],
      );
      return rows;
    },

    /** Records a batch: the generation each delivery was given, the count, and the cursor past the batch. */
    async recordBatch(id: string, items: { deliveryId: string; generation: number }[], last: RecoverableDelivery, q: Queryable): Promise<void> {
      await q.query(
        `INSERT INTO delivery_recovery_items (recovery_id, delivery_id, generation, recovered_at)
         SELECT $1, unnest($2::uuid[]), unnest($3::int[]), now()
         ON CONFLICT (recovery_id, delivery_id) DO UPDATE SET generation = EXCLUDED.generation, recovered_at = EXCLUDED.recovered_at`,
        [id, items.map((i) => i.deliveryId), items.map((i) => i.generation)],
      );
      await q.query(`UPDATE delivery_recoveries SET attempted = attempted + $2, cursor_created_at = $3::timestamptz, cursor_id = $4 WHERE id = $1`, [
        id,
        items.length,
        last.created_at,
        last.id,
      ]);
    },

    /** Ends a running recovery. */
    async finish(id: string, status: Exclude<RecoveryStatus, 'running'>, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE delivery_recoveries SET status = $2, completed_at = now() WHERE id = $1 AND status = 'running'`, [id, status]);
    },
  };
}
export type RecoveriesRepository = ReturnType<typeof createRecoveriesRepository>;
