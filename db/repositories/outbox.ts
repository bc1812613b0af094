import type { DeliveryStartPatch, WorkflowStart } from '../../engine/contract';
import type { Queryable } from '../pool';

export type OutboxItem =
  | { id: number; kind: 'schedule'; payload: { triggerId: string }; attempts: number }
  | { id: number; kind: 'workflow'; payload: WorkflowStart; attempts: number }
  | { id: number; kind: 'signal'; payload: WorkflowSignal; attempts: number };

/** A signal to a running workflow (kind 'signal'): sent once this commits; a workflow that is gone (closed) makes it done. */
export interface WorkflowSignal {
  workflowId: string;
  signal: string;
}

// The inserts are called by engine/outbox/starts.ts only (lint enforces it: only it imports
// createOutboxInsertsRepository): its verbs are how work is queued, each building its own workflow start.
export function createOutboxInsertsRepository(db: Queryable) {
  return {
    /**
     * Inside the caller's transaction: the workflow is started once this commits (now, or by the reconciler).
     * `holdMs`: the row is not handed off before then (its writer first tries to do without the workflow,
     * engine/deliveries/first-attempts.ts, and renews or releases the hold). Returns the row's id.
     */
    async insertWorkflowStart(start: WorkflowStart, holdMs = 0, q: Queryable = db): Promise<number> {
      const { rows } = await q.query<{ id: number }>(
        `INSERT INTO outbox (kind, payload, available_at) VALUES ('workflow', $1, now() + $2 * interval '1 millisecond') RETURNING id`,
        [JSON.stringify(start), holdMs],
      );
      return rows[0]!.id;
    },

    /** Inside the caller's transaction: the signal is sent once this commits (now, or by the reconciler). */
    async insertWorkflowSignal(s: WorkflowSignal, q: Queryable = db): Promise<void> {
      await q.query(`INSERT INTO outbox (kind, payload) VALUES ('signal', $1)`, [JSON.stringify(s)]);
    },

    /** The same row the database trigger on `triggers` writes (migration 3). */
    async insertScheduleSync(triggerId: string, q: Queryable = db): Promise<void> {
      await q.query(`INSERT INTO outbox (kind, payload) VALUES ('schedule', $1)`, [JSON.stringify({ triggerId })]);
    },
  };
}

export function createOutboxRepository(db: Queryable) {
  return {
    /**
     * Claims up to `limit` available rows for `leaseMs` (oldest first). A claimed row is invisible to
     * other claimers until its lease ends, so a hand-off that dies mid-way is retried, never lost.
     */
    async claim(limit: number, leaseMs: number): Promise<OutboxItem[]> {
      const { rows } = await db.query<OutboxItem>(
        `UPDATE outbox SET available_at = now() + $2 * interval '1 millisecond'
         WHERE id IN (SELECT id FROM outbox WHERE available_at <= now() ORDER BY available_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, kind, payload, attempts`,
        [limit, leaseMs],
      );
      return rows.sort((a, b) => a.id - b.id);
    },

    async complete(ids: number[]): Promise<void> {
      if (ids.length) await db.query(`DELETE FROM outbox WHERE id = ANY($1::bigint[])`, [ids]);
    },

    /**
     * Whether the start of this workflow is still in the outbox (held for a first attempt, or on its
     * way): the workflow is not there yet, but will be.
     */
    async hasStart(workflowId: string): Promise<boolean> {
      const { rows } = await db.query(`SELECT 1 FROM outbox WHERE kind = 'workflow' AND payload->>'workflowId' = $1 LIMIT 1`, [workflowId]);
      return rows.length > 0;
    },

    /**
     * Held rows (insertWorkflowStart's holdMs) stay hidden from the hand-off for `holdMs` more; answers
     * the ids still held. A row no longer held is left as it is and not answered: its hold ran out (it is
     * available), or the hand-off claimed it (its lease, engine/outbox/handoff.ts LEASE_MS, reaches further than a
     * hold: `holdMs` must be shorter), or its workflow was started and the row is gone.
     */
    async hold(ids: number[], holdMs: number): Promise<number[]> {
      if (ids.length === 0) return [];
      const { rows } = await db.query<{ id: string }>(
        `UPDATE outbox SET available_at = now() + $2 * interval '1 millisecond'
         WHERE id = ANY($1::bigint[]) AND available_at > now() AND available_at <= now() + $2 * interval '1 millisecond'
         RETURNING id`,
        [ids, holdMs],
      );
      return rows.map((r) => Number(r.id));
    },

    /** A held delivery's workflow start handed off now after all, its DeliveryInput patched with `patch` (where the first attempt left it). */
    async releaseHeld(id: number, patch: DeliveryStartPatch = {}): Promise<void> {
      await db.query(
        `UPDATE outbox SET available_at = now(), payload = jsonb_set(payload, '{args,0}', (payload #> '{args,0}') || $2::jsonb) WHERE id = $1`,
        [id, JSON.stringify(patch)],
      );
    },

    /** Claimed rows not handed off after all: available again now, with no attempt counted. */
    async release(ids: number[]): Promise<void> {
      if (ids.length) await db.query(`UPDATE outbox SET available_at = now() WHERE id = ANY($1::bigint[])`, [ids]);
    },

    /** Backs off (1 s doubling to 1 min) and keeps the error for the operator. */
    async fail(id: number, error: string): Promise<void> {
      await db.query(
        `UPDATE outbox SET attempts = attempts + 1, last_error = left($2, 2000),
           available_at = now() + least(60000, 1000 * power(2, least(attempts, 6))) * interval '1 millisecond'
         WHERE id = $1`,
        [id, error],
      );
    },

    async pendingCount(): Promise<number> {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox`);
      return rows[0]!.n;
    },
  };
}
export type OutboxRepository = ReturnType<typeof createOutboxRepository>;
