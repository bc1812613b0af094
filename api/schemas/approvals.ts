import { z } from 'zod';
import { listQuery, maxJsonBytes, timestamp } from './common';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired', 'cancelled'] as const;

export const approvalSchema = z
  .object({
    id: z.uuid(),
    runId: z.uuid(),
    agentId: z.uuid(),
    toolId: z.uuid().nullable().describe('The tool the model asked to call'),
    function: z.string().nullable().describe("An mcp tool's function (its server's name for it); null for the other tool types"),
    arguments: z.unknown().describe("The call's arguments: the model's, or those an approve replaced them with"),
    status: z.enum(APPROVAL_STATUSES).describe('pending until decided; expired when no decision came by expiresAt (a rejection); cancelled when its run ended first'),
    requestedAt: timestamp,
    expiresAt: timestamp.describe('APPROVAL_TIMEOUT (or the agent\'s configJson.approvalTimeout) after requestedAt'),
    decidedAt: timestamp.nullable(),
    decidedBy: z.uuid().nullable().describe('The user who decided; null until decided, and for expired and cancelled approvals'),
    comment: z.string().nullable().describe('The decider\'s comment; on a reject, what the model reads'),
  })
  .meta({ id: 'Approval' });

export const approvalListQuery = listQuery.extend({
  status: z.enum(APPROVAL_STATUSES).optional().describe('Only approvals in this status'),
});

export const approvalDecisionBody = z
  .strictObject({
    decision: z.enum(['approve', 'reject']),
    arguments: maxJsonBytes(z.record(z.string(), z.unknown()), 65_536)
      .optional()
      .describe("approve only: replaces the model's arguments; checked against the tool's parameter schema (400 naming the field)"),
    comment: z.string().max(4000).optional().describe('Why; on a reject the model receives { rejected: true, comment }'),
  })
  .meta({ id: 'ApprovalDecision' });
export type ApprovalDecisionInput = z.infer<typeof approvalDecisionBody>;
