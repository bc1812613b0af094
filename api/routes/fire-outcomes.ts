import { z } from 'zod';
import { sendPage } from '../pagination';
import { errorResponse, idParams } from '../schemas/common';
import { fireDeliverySchema, timelineEntrySchema, timelineQuery } from '../schemas/fire-outcomes';
import { fireParams } from '../schemas/fires';
import type { FireOutcomesService } from '../services/fire-outcomes-service';
import { callerOf, type App } from '../types';

/**
 * What followed a trigger's fires, under both trigger APIs (docs/api.md § Triggers, "Timeline"): a cron
 * trigger's timeline and one fire's deliveries.
 */
export function fireOutcomeRoutes(app: App, deps: { fireOutcomes: FireOutcomesService; publicBaseUrl: string }): void {
  const { fireOutcomes } = deps;
  const items = [
    { url: '/api/triggers/:id', scope: 'agent', kind: 'an agent trigger', tags: ['triggers'] },
    { url: '/api/user-triggers/:id', scope: 'user', kind: 'a user trigger', tags: ['user-triggers'] },
  ] as const;
  for (const { url, scope, kind, tags } of items) {
    app.get(
      `${url}/timeline`,
      {
        config: { access: 'read' },
        schema: {
          tags,
          summary: `The timeline of ${kind}`,
          description:
            'The expected fires of a cron/schedule trigger (as …/expected-fires: the same query, order, statuses and paging, at most 200 a page), each with ' +
            'what followed it: the status now of the run its fire started, and the deliveries of the fire\'s own event and of that ' +
            'run\'s result event (agent.completed / agent.failed) to the account\'s outgoing webhooks: the first 20, and how many more ' +
            '(`moreDeliveries`; GET …/fires/:fireId/deliveries lists them all).',
          params: idParams,
          querystring: timelineQuery,
          response: { 200: z.array(timelineEntrySchema), 409: errorResponse('The trigger is not a cron or schedule trigger.') },
        },
      },
      async (request, reply) =>
        sendPage(request, reply, await fireOutcomes.timeline(callerOf(request), scope, request.params.id, request.query), deps.publicBaseUrl),
    );

    app.get(
      `${url}/fires/:fireId/deliveries`,
      {
        config: { access: 'read' },
        schema: {
          tags,
          summary: `The deliveries that followed a fire of ${kind}`,
          description:
            'Every delivery of the fire\'s own event (agent.triggered or trigger.fired) and, once the run it started has ended, of that run\'s ' +
            'result event (agent.completed / agent.failed), oldest first: at most two per outgoing webhook of the account.',
          params: fireParams,
          response: { 200: z.array(fireDeliverySchema) },
        },
      },
      async (request) => fireOutcomes.deliveries(callerOf(request), scope, request.params.id, request.params.fireId),
    );
  }
}
