import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { authErrors, errorSchema, idParams, listQuery } from '../schemas/common';
import { fireAccepted, fireBody, fireSchema } from '../schemas/fires';
import type { FireService } from '../services/fire-service';
import { callerOf, type App } from '../types';

/** Fire history and manual fires of agent triggers (`/api/triggers/:id/…`) and user triggers (`/api/user-triggers/:id/…`). */
export function fireRoutes(app: App, deps: { fires: FireService; publicBaseUrl: string }): void {
  const { fires } = deps;
  const itemErrors = { 404: errorSchema, ...authErrors };

  const items = [
    { url: '/api/triggers/:id', scope: 'agent', tags: ['triggers'] },
    { url: '/api/user-triggers/:id', scope: 'user', tags: ['user-triggers'] },
  ] as const;
  for (const { url, scope, tags } of items) {
    app.get(
      `${url}/fires`,
      {
        schema: {
          tags,
          description: 'The fires of the trigger, newest first, each with the status of the run it started.',
          params: idParams,
          querystring: listQuery,
          response: { 200: z.array(fireSchema), 400: errorSchema, ...itemErrors },
        },
      },
      async (request, reply) =>
        sendPage(request, reply, await fires.list(callerOf(request), scope, request.params.id, pageRequest(request.query)), deps.publicBaseUrl),
    );

    app.post(
      `${url}/fire`,
      {
        schema: {
          tags,
          description:
            'Fires the trigger now (202); the fire shows in its history once it has run, and starts a run of the linked agent ' +
            'with input.payload = payload (none when the agent is a template or paused: the fire is skipped). 409 when the ' +
            'trigger is disabled; 429 (with Retry-After) beyond FIRES_PER_MINUTE fires of the account.',
          params: idParams,
          body: fireBody,
          response: { 202: fireAccepted, 400: errorSchema, 409: errorSchema, 429: errorSchema, ...itemErrors },
        },
      },
      async (request, reply) => reply.code(202).send(await fires.fire(callerOf(request), scope, request.params.id, request.body?.payload)),
    );
  }
}
