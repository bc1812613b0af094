import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { errorResponse, idParams, listQuery } from '../schemas/common';
import { fireAccepted, fireBody, fireDetailSchema, fireParams, fireSchema } from '../schemas/fires';
import type { FireService } from '../services/fire-service';
import { callerOf, type App } from '../types';

/** Fire history and manual fires of agent triggers (`/api/triggers/:id/…`) and user triggers (`/api/user-triggers/:id/…`). */
export function fireRoutes(app: App, deps: { fires: FireService; publicBaseUrl: string }): void {
  const { fires } = deps;

  const items = [
    { url: '/api/triggers/:id', scope: 'agent', kind: 'an agent trigger', tags: ['triggers'] },
    { url: '/api/user-triggers/:id', scope: 'user', kind: 'a user trigger', tags: ['user-triggers'] },
  ] as const;
  for (const { url, scope, kind, tags } of items) {
    app.get(
      `${url}/fires`,
      {
        config: { access: 'read' },
        schema: {
          tags,
          summary: `List the fires of ${kind}`,
          description:
            'The fires of the trigger, newest first, each with the status of the run it started. A fire shows once it has run ' +
            '(a moment after POST …/fire or the hook answered).',
          params: idParams,
          querystring: listQuery,
          response: { 200: z.array(fireSchema) },
        },
      },
      async (request, reply) =>
        sendPage(request, reply, await fires.list(callerOf(request), scope, request.params.id, pageRequest(request.query)), deps.publicBaseUrl),
    );

    app.get(
      `${url}/fires/:fireId`,
      {
        config: { access: 'read' },
        schema: {
          tags,
          summary: `Get a fire of ${kind}`,
          description: 'One fire of the trigger with the payload it fired with (a webhook trigger\'s: the body its hook received).',
          params: fireParams,
          response: { 200: fireDetailSchema },
        },
      },
      async (request) => fires.get(callerOf(request), scope, request.params.id, request.params.fireId),
    );

    app.post(
      `${url}/fire`,
      {
        config: { access: 'write' },
        schema: {
          tags,
          summary: `Fire ${kind} now`,
          description:
            'Fires the trigger now (202 with the fire\'s id); the fire shows in its history once it has run, and starts a run of ' +
            'the linked agent with input.payload = payload (none when the agent is a template or paused: the fire is skipped). ' +
            'A trigger disabled by the time the fire runs records it as skipped.',
          params: idParams,
          body: fireBody,
          response: {
            202: fireAccepted,
            409: errorResponse('The trigger is disabled.'),
            429: errorResponse('More than FIRES_PER_MINUTE fires of the account this minute; retry after Retry-After seconds.'),
          },
        },
      },
      async (request, reply) => reply.code(202).send(await fires.fire(callerOf(request), scope, request.params.id, request.body?.payload)),
    );
  }
}
