import type { PageRequest } from '../../db/paging';
import type { FiresRepository } from '../../db/repositories/fires';
import type { TriggerScope, TriggersRepository } from '../../db/repositories/triggers';
import { ConflictError, NotFoundError } from '../errors';
import { toFire, toFireDetail } from '../mappers';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { fireNow, type FireNowDeps } from './fire-now';

/**
 * A trigger's fire history and `POST …/fire` (docs/api.md § Triggers), under both trigger APIs: each scope
 * only sees its own triggers, like the trigger routes themselves.
 */
export function createFireService(deps: {
  triggers: TriggersRepository;
  fires: FiresRepository;
  admission: FireNowDeps;
  audit: AuditTrail;
}) {
  const { triggers, fires, admission, audit } = deps;

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
     * Fires the trigger now (fire-now.ts): recorded and counted against FIRES_PER_MINUTE (429
     * over it) in the request's transaction; a trigger linked to a template or paused agent records it
     * as skipped.
     */
    async fire(caller: Caller, scope: TriggerScope, id: string, payload: unknown): Promise<{ fireId: string }> {
      const trigger = await requireTrigger(caller, scope, id);
      if (!trigger.enabled) throw new ConflictError('Trigger is disabled; enable it to fire it');
      const fireId = await fireNow(admission, trigger, { source: 'manual', payload: payload ?? null }, (tx) =>
        audit.record(tx, caller, 'trigger.fire', id),
      );
      return { fireId };
    },
  };
}
export type FireService = ReturnType<typeof createFireService>;
