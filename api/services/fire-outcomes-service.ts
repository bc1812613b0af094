import type { FireDeliveryRow, FireOutcomesRepository } from '../../db/repositories/fire-outcomes';
import type { FiresRepository } from '../../db/repositories/fires';
import type { TriggerScope, TriggersRepository } from '../../db/repositories/triggers';
import { NotFoundError } from '../errors';
import type { Caller } from './auth-service';
import type { ExpectedFiresQuery, ScheduleTruthService } from './schedule-truth-service';

const toFireDelivery = (d: FireDeliveryRow) => ({
  id: d.id,
  webhookId: d.webhook_id,
  webhookName: d.webhook_name,
  eventId: d.event_id,
  eventType: d.event_type,
  status: d.status,
  attempts: d.attempts,
  lastStatusCode: d.last_status_code,
  lastError: d.last_error,
  nextAttemptAt: d.next_attempt_at?.toISOString() ?? null,
  createdAt: d.created_at.toISOString(),
});
type FireDelivery = ReturnType<typeof toFireDelivery>;

/** A timeline entry lists this many deliveries at most (docs/api.md § Triggers, "Timeline"); `moreDeliveries` counts the rest. */
export const TIMELINE_DELIVERIES = 20;

function byFire(rows: (FireDeliveryRow & { fire_total: number })[]): Map<string, { list: FireDelivery[]; total: number }> {
  const out = new Map<string, { list: FireDelivery[]; total: number }>();
  for (const row of rows) {
    const entry = out.get(row.fire_id) ?? { list: [], total: row.fire_total };
    entry.list.push(toFireDelivery(row));
    out.set(row.fire_id, entry);
  }
  return out;
}

/**
 * What followed a trigger's fires (docs/api.md § Triggers, "Timeline"): the run each started and the
 * deliveries of the events after it, for one fire or for a page of a cron trigger's expected fires.
 */
export function createFireOutcomesService(deps: {
  triggers: TriggersRepository;
  fires: FiresRepository;
  outcomes: FireOutcomesRepository;
  scheduleTruth: ScheduleTruthService;
}) {
  const { triggers, fires, outcomes, scheduleTruth } = deps;

  return {
    /** The deliveries that followed one fire of the trigger, oldest first. */
    async deliveries(caller: Caller, scope: TriggerScope, id: string, fireId: string) {
      const trigger = await triggers.findById(caller.accountId, scope, id);
      if (!trigger) throw new NotFoundError('Trigger');
      if (!(await fires.findForTrigger(caller.accountId, id, fireId))) throw new NotFoundError('Fire');
      return (await outcomes.deliveries(caller.accountId, [fireId])).map(toFireDelivery);
    },

    /** A page of expected fires (as …/expected-fires), each with its run's status now and the deliveries that followed it. */
    async timeline(caller: Caller, scope: TriggerScope, id: string, query: ExpectedFiresQuery) {
      const page = await scheduleTruth.expectedFires(caller, scope, id, query);
      const fireIds = page.items.flatMap((e) => (e.fireId ? [e.fireId] : []));
      const [runs, delivered] = await Promise.all([outcomes.runs(caller.accountId, fireIds), outcomes.deliveries(caller.accountId, fireIds, TIMELINE_DELIVERIES)]);
      const runStatus = new Map(runs.map((r) => [r.fire_id, r.run_status]));
      const deliveries = byFire(delivered);
      return {
        ...page,
        items: page.items.map((e) => {
          const listed = (e.fireId && deliveries.get(e.fireId)) || { list: [], total: 0 };
          return {
            ...e,
            runStatus: (e.fireId && runStatus.get(e.fireId)) || null,
            deliveries: listed.list,
            moreDeliveries: listed.total - listed.list.length,
          };
        }),
      };
    },
  };
}
export type FireOutcomesService = ReturnType<typeof createFireOutcomesService>;
