import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { accountSchema, actingAccountSchema, auditEntrySchema, MAX_USAGE_DAYS, transactionSchema, usageDaySchema, usageQuery } from '../schemas/account';
import { errorResponse, listQuery } from '../schemas/common';
import type { AccountService } from '../services/account-service';
import type { AuditTrail } from '../services/audit-trail';
import { callerOf, type App } from '../types';

export function accountRoutes(app: App, deps: { account: AccountService; audit: AuditTrail; publicBaseUrl: string }): void {
  const tags = ['account'];
  app.get(
    '/api/account',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'The account acted in',
        description:
          'The account this request acts in (your own, or the one the Account-Id header names), with its balance in units (it moves ' +
          'only through the ledger: see transactions).',
        response: { 200: accountSchema },
      },
    },
    async (request) => deps.account.get(callerOf(request)),
  );

  app.get(
    '/api/account/transactions',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'The ledger',
        description:
          'Every movement of the balance, newest first: the initial grant, and each charge (creating a non-template agent, ' +
          'moving an agent out of template) with the resource it paid for and the balance after it.',
        querystring: listQuery,
        response: { 200: z.array(transactionSchema) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await deps.account.listTransactions(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.get(
    '/api/account/usage',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Model and tool use per day',
        description:
          'The account\'s use per UTC day from `from` to `to` (inclusive; default the last 30 days to today), oldest first, one element ' +
          'per day including days with nothing: runs that began running, the prompt and completion tokens of the model calls and the ' +
          'tool steps recorded that day. Today\'s prompt + completion tokens are what MODEL_TOKENS_PER_DAY limits. At most ' +
          `${MAX_USAGE_DAYS} days per request. 400 by rules between the two parameters and the clock that no JSON Schema keyword ` +
          'states: `from` after `to` (`querystring.from: must not be after to (<from> > <to>)`), or a longer range ' +
          `(\`querystring: from <from> to <to> is <n> days; at most ${MAX_USAGE_DAYS} days per request\`; \`to\` is today when omitted).`,
        querystring: usageQuery,
        response: { 200: z.array(usageDaySchema) },
      },
    },
    async (request) => deps.account.usage(callerOf(request), request.query),
  );

  app.get(
    '/api/accounts',
    {
      config: { access: 'self' },
      schema: {
        tags,
        summary: 'Accounts you can act in',
        description:
          'Your own account first (role owner), then each account whose team you are an active member of, newest membership ' +
          'first, with your role and effective permissions there. Send an id as the Account-Id header to act in that account.',
        querystring: listQuery,
        response: { 200: z.array(actingAccountSchema) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await deps.account.listActingAccounts(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.get(
    '/api/account/audit',
    {
      config: { access: 'audit' },
      schema: {
        tags,
        summary: 'The audit log',
        description:
          'Every write in the account acted in, newest first, with who made it: creates, updates, deletes, fires, runs, tests, ' +
          'retries, imports and team changes. Each entry is written in the same transaction as the change it records. For the owner ' +
          'and admins only (403 otherwise).',
        querystring: listQuery,
        response: { 200: z.array(auditEntrySchema), 403: errorResponse('Your role in this account is editor or viewer: the audit log is for the owner and admins.') },
      },
    },
    async (request, reply) => sendPage(request, reply, await deps.audit.list(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );
}
