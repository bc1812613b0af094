import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { accountSchema, transactionSchema } from '../schemas/account';
import { authErrors, errorSchema, listQuery } from '../schemas/common';
import type { AccountService } from '../services/account-service';
import { callerOf, type App } from '../types';

export function accountRoutes(app: App, deps: { account: AccountService; publicBaseUrl: string }): void {
  const tags = ['account'];
  app.get('/api/account', { schema: { tags, response: { 200: accountSchema, ...authErrors } } }, async (request) =>
    deps.account.get(callerOf(request)),
  );

  app.get(
    '/api/account/transactions',
    { schema: { tags, querystring: listQuery, response: { 200: z.array(transactionSchema), 400: errorSchema, ...authErrors } } },
    async (request, reply) =>
      sendPage(request, reply, await deps.account.listTransactions(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );
}
