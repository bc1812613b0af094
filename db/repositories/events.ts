import type { FanOutResult } from '../../engine/contract';
import type { Queryable } from '../pool';
import { listensForTriggers, listeningTrigger, subscribedWebhook } from './event-listeners';

export interface EventRow {
  id: string;
  account_id: string;
  type: string;
  data: Record<string, unknown>;
  chain_depth: number;
  target_webhook_id: string | null;
  /** The first event of its chain (docs/api.md § Events "Chains"): itself unless a fire or a run caused it. */
  root_event_id: string;
  created_at: Date;
}

export interface NewEvent {
  /** Given when the writer needs the id before the row (a fire's own event is its chain's root). */
  id?: string;
  accountId: string;
  type: string;
  data: Record<string, unknown>;
  chainDepth?: number;
  /** The root of the chain of the fire that wrote this event; absent: see insertEvent. */
  rootEventId?: string | null;
  /** webhook.test: delivered to this webhook only, and to no trigger. */
  targetWebhookId?: string;
}

// Rows written before roots existed (or by hand) have none: they are their own root.
const COLUMNS = `id, account_id, type, data, chain_depth, target_webhook_id, coalesce(root_event_id, id) AS root_event_id, created_at`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RUN_RESULTS = new Set(['agent.completed', 'agent.failed']);

/** The run whose result a run's agent.completed / agent.failed event reports (`data.runId`). */
function reportedRun(e: NewEvent): string | null {
  const runId = e.data.runId;
  return RUN_RESULTS.has(e.type) && typeof runId === 'string' && UUID.test(runId) ? runId : null;
}

/** What an event's fan-out found when nothing listens for it. */
export const NOTHING_LISTENS: FanOutResult = { deliveries: 0, fires: 0, overBudget: 0, unevaluated: 0 };

/** Events as their writers write them (engine/unit.ts `emit`) and their readers find them. */
export function createEventsRepository(db: Queryable) {
  return {
    /**
     * The row, and whether anything listens for it: its writer fans it out in the same transaction
     * (engine/events/fan-out.ts). An event no webhook is subscribed to and no trigger listens for (the
     * conditions of db/repositories/event-listeners.ts; triggers only for an event that listensForTriggers)
     * is written with its fan-out done (`settled`), so its writer has nothing more to ask.
     * Its chain's root (docs/api.md § Events "Chains"): `rootEventId` when given (a fire's event); for a run's result, the root of
     * the fire that started the run, so a chain of runs stays one chain; otherwise the event itself.
     */
    async insertEvent(e: NewEvent, q: Queryable = db): Promise<EventRow & { settled: boolean }> {
      const { rows } = await q.query<EventRow & { settled: boolean }>(
        `WITH new AS (SELECT coalesce($1::uuid, gen_random_uuid()) AS id),
         quiet AS (
           SELECT NOT EXISTS (SELECT 1 FROM webhooks w WHERE ${subscribedWebhook('w', '$2', '$3', '$6')})
             AND (NOT $9::boolean OR NOT EXISTS (SELECT 1 FROM triggers t WHERE ${listeningTrigger('t', '$2', '$3')})) AS settled
         )
         INSERT INTO events (id, account_id, type, data, chain_depth, target_webhook_id, root_event_id, dispatch_status, dispatch_result)
         SELECT new.id, $2, $3, $4, $5, $6,
           coalesce($7::uuid, (SELECT f.root_event_id FROM runs r JOIN fires f ON f.id = r.fire_id WHERE r.id = $8::uuid), new.id),
           CASE WHEN quiet.settled THEN 'done' END, CASE WHEN quiet.settled THEN $10::jsonb END
         FROM new, quiet
         RETURNING ${COLUMNS}, dispatch_status IS NOT NULL AS settled`,
        [
          e.id ?? null,
          e.accountId,
          e.type,
          JSON.stringify(e.data),
          e.chainDepth ?? 0,
          e.targetWebhookId ?? null,
          e.rootEventId ?? null,
          reportedRun(e),
          listensForTriggers({ target_webhook_id: e.targetWebhookId ?? null, chain_depth: e.chainDepth ?? 0 }),
          JSON.stringify(NOTHING_LISTENS),
        ],
      );
      return rows[0]!;
    },

    async findEvent(id: string, q: Queryable = db): Promise<EventRow | null> {
      const { rows } = await q.query<EventRow>(`SELECT ${COLUMNS} FROM events WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },
  };
}
export type EventsRepository = ReturnType<typeof createEventsRepository>;

/** An event's fan-out (engine/events/fan-out.ts, activities/event-matching.ts): its outcome, and the chain budget of roots. */
export function createEventDispatchRepository(db: Queryable) {
  return {
    /** The outcome of the event's fan-out, once it has one; the row is locked for the caller's transaction. */
    async lockDispatch(id: string, q: Queryable = db): Promise<{ status: 'done' | 'failed' | null; result: FanOutResult | null } | null> {
      const { rows } = await q.query<{ dispatch_status: 'done' | 'failed' | null; dispatch_result: FanOutResult | null }>(
        `SELECT dispatch_status, dispatch_result FROM events WHERE id = $1 FOR UPDATE`,
        [id],
      );
      const row = rows[0];
      return row ? { status: row.dispatch_status, result: row.dispatch_result } : null;
    },

    async markDispatched(id: string, result: FanOutResult, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE events SET dispatch_status = 'done', dispatch_result = $2, dispatch_error = NULL WHERE id = $1`, [
        id,
        JSON.stringify(result),
      ]);
    },

    /**
     * The part of the fan-out made where the event was written (its deliveries) while the worker matches
     * its triggers: kept so the worker's outcome adds to it; the event stays undispatched until then.
     */
    async keepPartialResult(id: string, result: FanOutResult, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE events SET dispatch_result = $2 WHERE id = $1`, [id, JSON.stringify(result)]);
    },

    /** The fan-out failed for good (every retry, or a deterministic failure): kept for the operator. */
    async markDispatchFailed(id: string, error: string, q: Queryable = db): Promise<void> {
      await q.query(`UPDATE events SET dispatch_status = 'failed', dispatch_error = left($2, 2000) WHERE id = $1 AND dispatch_status IS NULL`, [
        id,
        error,
      ]);
    },

    /**
     * Takes up to `wanted` fires from the budget of the chain rooted at `rootId`, atomically: the root
     * row is locked until the caller's transaction ends, so concurrent fan-outs of one chain queue here
     * and together never take more than `budget`. Returns how many were granted (0 when the root is gone).
     */
    async takeChainFires(rootId: string, wanted: number, budget: number, q: Queryable = db): Promise<number> {
      const { rows } = await q.query<{ chain_fires: number }>(`SELECT chain_fires FROM events WHERE id = $1 FOR UPDATE`, [rootId]);
      if (!rows[0]) return 0;
      const granted = Math.max(0, Math.min(wanted, budget - rows[0].chain_fires));
      if (granted > 0) await q.query(`UPDATE events SET chain_fires = chain_fires + $2 WHERE id = $1`, [rootId, granted]);
      return granted;
    },
  };
}
export type EventDispatchRepository = ReturnType<typeof createEventDispatchRepository>;
