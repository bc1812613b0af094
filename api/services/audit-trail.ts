import type { PageRequest } from '../../db/paging';
import type { Queryable } from '../../db/pool';
import type { AuditRepository } from '../../db/repositories/audit';
import type { TeamRepository } from '../../db/repositories/team';
import { NotFoundError } from '../errors';
import { toAuditEntry } from '../mappers';
import type { Caller } from './access';

/** What an audit entry says was done: `<resource>.<verb>`; the resource type is the part before the dot. */
export type AuditAction =
  | 'agent.create' | 'agent.update' | 'agent.delete' | 'agent.import'
  | 'connector.create' | 'connector.update' | 'connector.delete'
  | 'tool.create' | 'tool.update' | 'tool.delete'
  | 'trigger.create' | 'trigger.update' | 'trigger.delete' | 'trigger.fire'
  | 'webhook.create' | 'webhook.update' | 'webhook.delete' | 'webhook.test' | 'webhook.recover'
  // Written by the engine (actor null), not through this trail: engine/deliveries/attempts.ts.
  | 'webhook.disable'
  | 'delivery.retry'
  | 'run.create' | 'run.cancel' | 'run.rerun' | 'run.replay' | 'approval.decided'
  | 'team.invite' | 'team.update' | 'team.remove' | 'team.accept';

/**
 * The audit log (GET /api/account/audit): every write in an account records its actor, action and
 * resource in the write's own transaction, so an entry exists exactly when the write committed.
 */
export function createAuditTrail(deps: { audit: AuditRepository; team: TeamRepository }) {
  const { audit, team } = deps;

  async function insert(tx: Queryable, accountId: string, actorUserId: string, action: AuditAction, resourceId: string | null) {
    await audit.insert({ accountId, actorUserId, action, resourceType: action.slice(0, action.indexOf('.')), resourceId }, tx);
  }

  return {
    /**
     * Records a write of the caller in the account they act in, inside the write's transaction `tx`. A
     * member's membership is checked again here and held until the transaction ends: a member removed
     * while their write was under way gets 404 and the write rolls back whole, and a removal that comes
     * later waits for the write to commit. Either way the write and its entry commit together or not at all.
     */
    async record(tx: Queryable, caller: Caller, action: AuditAction, resourceId: string | null): Promise<void> {
      await this.holdMembership(tx, caller);
      await insert(tx, caller.accountId, caller.userId, action, resourceId);
    },

    /**
     * `record` in two steps, for a write that takes a contended lock (the account row's, by a charge) and
     * wants it last: the entry first, then that lock, then `holdMembership` — held from there to the
     * commit as `record` holds it, so a removal mid-write still refuses the write whole.
     */
    async entry(tx: Queryable, caller: Caller, action: AuditAction, resourceId: string | null): Promise<void> {
      await insert(tx, caller.accountId, caller.userId, action, resourceId);
    },

    /** A member's membership checked and held until the transaction ends (404 when it is gone); nothing for the owner. */
    async holdMembership(tx: Queryable, caller: Caller): Promise<void> {
      if (caller.role !== 'owner' && !(await team.holdActiveMembership(caller.accountId, caller.userId, tx))) throw new NotFoundError('Account');
    },

    /** Records a write made in an account the actor is not (yet) acting in: accepting its invitation. */
    async recordJoin(tx: Queryable, accountId: string, actorUserId: string, memberId: string): Promise<void> {
      await insert(tx, accountId, actorUserId, 'team.accept', memberId);
    },

    async list(caller: Caller, page: PageRequest) {
      const result = await audit.list(caller.accountId, page);
      return { ...result, items: result.items.map(toAuditEntry) };
    },
  };
}
export type AuditTrail = ReturnType<typeof createAuditTrail>;
