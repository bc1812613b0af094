import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { approvalDecisionBody, approvalListQuery, approvalSchema } from '../schemas/approvals';
import { errorResponse, idParams, listQuery } from '../schemas/common';
import type { ApprovalService } from '../services/approval-service';
import { callerOf, type App } from '../types';

/** People in the loop (docs/api.md § Approvals): `/api/approvals` and `/api/runs/:id/approvals`. */
export function approvalRoutes(app: App, deps: { approvals: ApprovalService; publicBaseUrl: string }): void {
  const { approvals } = deps;
  const tags = ['approvals'];

  app.get(
    '/api/approvals',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List approvals',
        description:
          "The account's approvals, newest first: each a model run's call of a tool that requires approval (requiresApproval), waiting for " +
          'or given a decision. status keeps one status (pending, approved, rejected, expired, cancelled).',
        querystring: approvalListQuery,
        response: { 200: z.array(approvalSchema) },
      },
    },
    async (request, reply) => sendPage(request, reply, await approvals.list(callerOf(request), { status: request.query.status }, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.get(
    '/api/approvals/:id',
    {
      config: { access: 'read' },
      schema: { tags, summary: 'Get an approval', description: 'One approval of the account.', params: idParams, response: { 200: approvalSchema } },
    },
    async (request) => approvals.get(callerOf(request), request.params.id),
  );

  app.get(
    '/api/runs/:id/approvals',
    {
      config: { access: 'read' },
      schema: { tags, summary: "List a run's approvals", description: 'The approvals of one run, newest first.', params: idParams, querystring: listQuery, response: { 200: z.array(approvalSchema) } },
    },
    async (request, reply) => sendPage(request, reply, await approvals.listOfRun(callerOf(request), request.params.id, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/approvals/:id/decision',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Decide an approval',
        description:
          'approve (optionally with arguments that replace the model\'s, checked against the tool\'s parameter schema) or reject (with a ' +
          'comment the model receives as the tool result { rejected: true, comment }). Needs the right to run agents (a viewer: 403). ' +
          'The decision is recorded first and reaches the waiting run through Temporal, so one accepted while Temporal is down takes ' +
          'effect when it returns; the run then goes on where it stopped. Emits approval.decided { approvalId, runId, decision, decidedBy }; audited.',
        params: idParams,
        body: approvalDecisionBody,
        response: {
          200: approvalSchema,
          409: errorResponse('The approval was already decided (the message names the first decision), expired, or cancelled with its run.'),
        },
      },
    },
    async (request) => approvals.decide(callerOf(request), request.params.id, request.body),
  );
}
