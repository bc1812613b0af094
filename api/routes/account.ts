import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { accountSchema, transactionSchema } from '../schemas/account';
import { listQuery } from '../schemas/common';
import type { AccountService } from '../services/account-service';
import { callerOf, type App } from '../types';

export function accountRoutes(app: App, deps: { account: AccountService; publicBaseUrl: string }): void {
  const tags = ['account'];
  app.get(
    '/api/account',
    {
      schema: {
        tags,
        summary: 'Your account',
        description: 'The account you own, with its balance in units (it moves only through the ledger: see transactions).',
        response: { 200: accountSchema },
      },
    },
    async (request) => deps.account.get(callerOf(request)),
  );

  app.get(
    '/api/account/transactions',
    {
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
}
