import type { PageRequest } from '../../db/paging';
import type { ApprovalRow, ApprovalsRepository, ApprovalStatus } from '../../db/repositories/approvals';
import type { RunsRepository } from '../../db/repositories/runs';
import type { Engine } from '../../engine';
import { compileJsonSchema, describeSchemaErrors } from '../../lib/json-schema';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import type { approvalSchema, ApprovalDecisionInput } from '../schemas/approvals';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './access';
import type { z } from 'zod';

const iso = (d: Date) => d.toISOString();

/** The API shape of an approval (docs/api.md § Approvals). */
export function toApproval(a: ApprovalRow) {
  return {
    id: a.id,
    runId: a.run_id,
    agentId: a.agent_id,
    toolId: a.tool_id,
    function: a.function,
    arguments: a.arguments,
    status: a.status,
    requestedAt: iso(a.created_at),
    expiresAt: iso(a.expires_at),
    decidedAt: a.decided_at ? iso(a.decided_at) : null,
    decidedBy: a.decided_by,
    comment: a.comment,
  } satisfies z.input<typeof approvalSchema>;
}
export type Approval = ReturnType<typeof toApproval>;

/** Why a decision was refused, from the approval as it stands (it was not pending, or its time was up). */
function refusal(a: ApprovalRow): Error {
  // A pending one here is past its expiry, which the workflow has not yet recorded.
  if (a.status === 'pending' || a.status === 'expired') return new ConflictError(`Approval expired at ${iso(a.expires_at)}: it can no longer be decided`);
  if (a.status === 'cancelled') return new ConflictError('Approval was cancelled (its run ended): it can no longer be decided');
  return new ConflictError(`Approval was already decided: ${a.status}${a.decided_at ? ` at ${iso(a.decided_at)}` : ''}${a.decided_by ? ` by user ${a.decided_by}` : ''}`);
}

/**
 * The approvals inbox and the decision (docs/api.md § Approvals). A decision is written in Postgres first —
 * the approval, `approval.decided`, the audit entry and the outbox row of the run's `approvalDecided` signal,
 * in one transaction — and reaches the waiting run by the outbox, so one accepted while Temporal is down
 * takes effect when it returns.
 */
export function createApprovalService(deps: { approvals: ApprovalsRepository; runs: RunsRepository; engine: Engine; audit: AuditTrail }) {
  const { approvals, runs, engine, audit } = deps;

  return {
    async list(caller: Caller, filter: { status?: ApprovalStatus }, page: PageRequest) {
      const result = await approvals.listAccountApprovals(caller.accountId, filter, page);
      return { ...result, items: result.items.map(toApproval) };
    },

    async listOfRun(caller: Caller, runId: string, page: PageRequest) {
      if (!(await runs.findAccountRun(caller.accountId, runId))) throw new NotFoundError('Run');
      const result = await approvals.listAccountApprovals(caller.accountId, { runId }, page);
      return { ...result, items: result.items.map(toApproval) };
    },

    async get(caller: Caller, id: string): Promise<Approval> {
      const row = await approvals.findAccountApproval(caller.accountId, id);
      if (!row) throw new NotFoundError('Approval');
      return toApproval(row);
    },

    async decide(caller: Caller, id: string, body: ApprovalDecisionInput): Promise<Approval> {
      const current = await approvals.findAccountApproval(caller.accountId, id);
      if (!current) throw new NotFoundError('Approval');
      if (current.status !== 'pending' || current.expires_at.getTime() <= Date.now()) throw refusal(current);
      if (body.decision === 'reject' && body.arguments !== undefined) throw new ValidationError('arguments: only an approve takes arguments');
      if (body.arguments !== undefined) {
        const compiled = compileJsonSchema(current.parameters);
        if (!compiled.ok) throw new ValidationError(`arguments: the tool's parameter schema ${compiled.message}`);
        if (!compiled.validate(body.arguments)) throw new ValidationError(`arguments: do not match the tool's parameters: ${describeSchemaErrors(compiled.validate.errors)}`);
      }
      const decided = await engine.transaction(async (tx, unit) => {
        const row = await approvals.decideApproval(caller.accountId, id, {
          status: body.decision === 'approve' ? 'approved' : 'rejected',
          arguments: body.arguments,
          comment: body.comment ?? null,
          decidedBy: caller.userId,
        }, tx);
        if (!row) return null;
        await unit.signalApprovalDecided(row.run_id);
        await unit.emit(
          { accountId: row.account_id, type: 'approval.decided', data: { approvalId: row.id, runId: row.run_id, decision: body.decision, decidedBy: caller.userId } },
          { agentId: row.agent_id },
        );
        await audit.record(tx, caller, 'approval.decided', row.id);
        return row;
      });
      if (!decided) {
        // Decided, expired or cancelled meanwhile: say which.
        const now = await approvals.findAccountApproval(caller.accountId, id);
        if (!now) throw new NotFoundError('Approval');
        throw refusal(now);
      }
      return toApproval(decided);
    },
  };
}
export type ApprovalService = ReturnType<typeof createApprovalService>;
