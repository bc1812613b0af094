import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { accountSchema, actingAccountSchema, transactionSchema } from '../schemas/account';
import { listQuery } from '../schemas/common';
import type { AccountService } from '../services/account-service';
import { callerOf, type App } from '../types';

export function accountRoutes(app: App, deps: { account: AccountService; publicBaseUrl: string }): void {
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
}
