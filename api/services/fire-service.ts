import type { PageRequest } from '../../db/paging';
import type { Db } from '../../db/pool';
import type { FiresRepository } from '../../db/repositories/fires';
import type { TriggerScope, TriggersRepository } from '../../db/repositories/triggers';
import { startFire } from '../../lib/engine-starts';
import type { HandOff } from '../../lib/handoff';
import { ConflictError, NotFoundError } from '../errors';
import { toFire, toFireDetail } from '../mappers';
import type { Caller } from './auth-service';

/**
 * A trigger's fire history and `POST …/fire` (DESIGN §4 Triggers), under both trigger APIs: each scope
 * only sees its own triggers, like the trigger routes themselves.
 */
export function createFireService(deps: { db: Db; triggers: TriggersRepository; fires: FiresRepository; handOff: HandOff }) {
  const { db, triggers, fires, handOff } = deps;

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
     * Fires the trigger now: the fire is queued (outbox) and handed to Temporal; its id is answered at
     * once and shows in the history when the fire has run. A trigger disabled by then records it as skipped.
     */
    async fire(caller: Caller, scope: TriggerScope, id: string, payload: unknown): Promise<{ fireId: string }> {
      const trigger = await requireTrigger(caller, scope, id);
      if (!trigger.enabled) throw new ConflictError('Trigger is disabled; enable it to fire it');
      const fireId = await startFire(db, trigger, { source: 'manual', payload: payload ?? null });
      handOff.kick();
      return { fireId };
    },
  };
}
export type FireService = ReturnType<typeof createFireService>;
