import { z } from 'zod';
import { sendPage } from '../pagination';
import { errorResponse, idParams } from '../schemas/common';
import { expectedFireSchema, expectedFiresQuery, previewQuery, previewTimeSchema, schedulePreviewQuery } from '../schemas/schedule-truth';
import type { ScheduleTruthService } from '../services/schedule-truth-service';
import { callerOf, type App } from '../types';

const notScheduled = errorResponse('The trigger is not a cron or schedule trigger.');

/**
 * Schedule truth of agent triggers (`/api/triggers/:id/…`) and user triggers (`/api/user-triggers/:id/…`):
 * what should have fired and what did, and what will fire next (docs/api.md § Triggers).
 */
export function scheduleTruthRoutes(app: App, deps: { scheduleTruth: ScheduleTruthService; publicBaseUrl: string }): void {
  const { scheduleTruth } = deps;

  app.get(
    '/api/schedule-preview',
    {
      config: { access: 'read' },
      schema: {
        tags: ['triggers'],
        summary: 'The next fire times of an expression',
        description:
          'The next n times a cron/schedule trigger with this cronExpression and timezone would fire, from now, as …/preview answers for ' +
          'a trigger that exists: for a form to show before the trigger is written. 400 names the field when the expression or the zone ' +
          'is one a trigger could not have.',
        querystring: schedulePreviewQuery,
        response: { 200: z.array(previewTimeSchema) },
      },
    },
    async (request) => scheduleTruth.previewExpression(request.query.cronExpression, request.query.timezone, request.query.n),
  );
  const items = [
    { url: '/api/triggers/:id', scope: 'agent', kind: 'an agent trigger', tags: ['triggers'] },
    { url: '/api/user-triggers/:id', scope: 'user', kind: 'a user trigger', tags: ['user-triggers'] },
  ] as const;
  for (const { url, scope, kind, tags } of items) {
    app.get(
      `${url}/expected-fires`,
      {
        config: { access: 'read' },
        schema: {
          tags,
          summary: `The times ${kind} should have fired, and what happened`,
          description:
            'Every time in [from, to) the cron/schedule trigger should have fired, oldest first, computed from its expression and time zone ' +
            'as its Temporal Schedule computes them (DST days included: docs/api.md § Triggers), following each version of the trigger ' +
            '(expression, zone, enabled) in force at that time. Each is joined to the fire recorded for it (fired, with the fire id and lag) ' +
            'or labelled with why there is none. At most `limit` (≤ 1000) per page; Link rel="next" continues. ' +
            'Rules between the parameters and the clock, which no JSON Schema keyword states: `from` must be before `to` and before ' +
            'now (400 `querystring.from: must be before to (and before now: <now>)`), and at most RETENTION_DAYS ago (400 ' +
            '`querystring.from: must be within the last <n> days (RETENTION_DAYS): older fires are deleted`).',
          params: idParams,
          querystring: expectedFiresQuery,
          response: {
            200: z.array(expectedFireSchema),
            409: notScheduled,
          },
        },
      },
      async (request, reply) =>
        sendPage(request, reply, await scheduleTruth.expectedFires(callerOf(request), scope, request.params.id, request.query), deps.publicBaseUrl),
    );

    app.get(
      `${url}/preview`,
      {
        config: { access: 'read' },
        schema: {
          tags,
          summary: `The next fire times of ${kind}`,
          description:
            'The next n times the cron/schedule trigger will fire, from now, in UTC and on the wall clock of its time zone: the times its ' +
            'Temporal Schedule lists as upcoming (`temporal schedule describe`), DST days included. A disabled trigger\'s times are those it ' +
            'would fire at once enabled.',
          params: idParams,
          querystring: previewQuery,
          response: { 200: z.array(previewTimeSchema), 409: notScheduled },
        },
      },
      async (request) => scheduleTruth.preview(callerOf(request), scope, request.params.id, request.query.n),
    );
  }
}
