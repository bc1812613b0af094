import type { PageRequest } from '../../db/paging';
import type { FiresRepository } from '../../db/repositories/fires';
import type { TriggerScope, TriggersRepository } from '../../db/repositories/triggers';
import type { HandOff } from '../../lib/handoff';
import { ConflictError, NotFoundError } from '../errors';
import { toFire, toFireDetail } from '../mappers';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { queueFire, type FireAdmission } from './fire-admission';

/**
 * A trigger's fire history and `POST …/fire` (README § Triggers), under both trigger APIs: each scope
 * only sees its own triggers, like the trigger routes themselves.
 */
export function createFireService(deps: {
  triggers: TriggersRepository;
  fires: FiresRepository;
  handOff: HandOff;
  admission: FireAdmission;
  audit: AuditTrail;
}) {
  const { triggers, fires, handOff, admission, audit } = deps;

  async function requireTrigger(caller: Caller, scope: TriggerScope, id: string) {
    const row = await triggers.findById(caller.accountId, scope, id);
    if (!row) throw new NotFoundError('Trigger');
    return row;
  }

  return {
    async list(caller: Caller, scope: TriggerScope, id: string, page: PageRequest) {
      await requireTrigger(caller, scope, id);
      const result = await fires.listForTrigger(caller.accountId, id, page);
      return { ...result, items: result.items.map(toFire) };
    },

    /** One fire of the trigger, with the payload it fired with (a hook's body, an event's data, …). */
    async get(caller: Caller, scope: TriggerScope, id: string, fireId: string) {
      await requireTrigger(caller, scope, id);
      const row = await fires.findForTrigger(caller.accountId, id, fireId);
      if (!row) throw new NotFoundError('Fire');
      return toFireDetail(row);
    },

    /**
     * Fires the trigger now: the fire is counted against FIRES_PER_MINUTE (429 over it), queued (outbox)
     * and handed to Temporal; its id is answered at once and shows in the history when the fire has
     * run. A trigger disabled by then, or linked to a template or paused agent, records it as skipped.
     */
    async fire(caller: Caller, scope: TriggerScope, id: string, payload: unknown): Promise<{ fireId: string }> {
      const trigger = await requireTrigger(caller, scope, id);
      if (!trigger.enabled) throw new ConflictError('Trigger is disabled; enable it to fire it');
      const fireId = await queueFire(admission, trigger, { source: 'manual', payload: payload ?? null }, (tx) =>
        audit.record(tx, caller, 'trigger.fire', id),
      );
      handOff.kick();
      return { fireId };
    },
  };
}
export type FireService = ReturnType<typeof createFireService>;
