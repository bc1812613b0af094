import { z } from 'zod';
import { EXPECTED_FIRE_STATUSES } from '../../lib/expected-fires';
import { cursorParameter, timestamp } from './common';
import { cronExpression, timezone } from './trigger-configs';

/** Schedule truth (docs/api.md § Triggers): the queries and answers of expected fires and the previews. */

const instant = z.iso.datetime({ offset: true });

export const expectedFiresQuery = z.object({
  from: instant.optional().describe('ISO 8601 instant; default: 24 h before `to`. At most RETENTION_DAYS (30) days ago'),
  to: instant.optional().describe('ISO 8601 instant, exclusive; default and at most: now (later times: see …/preview)'),
  limit: z.coerce.number().int().min(1).max(1000).default(1000).describe('Page size, 1–1000'),
  cursor: cursorParameter(200),
});

export const expectedFireSchema = z
  .object({
    scheduledAt: timestamp.describe('When the trigger should have fired (UTC)'),
    localTime: z.string().describe("The same time on the wall clock of the trigger's time zone, with its offset (2027-03-28T03:30:00+02:00)"),
    status: z
      .enum(EXPECTED_FIRE_STATUSES)
      .describe(
        'fired / throttled: a fire was recorded for this time, as such. paused: it was skipped because the agent was paused or a template. ' +
          'disabled: the trigger was disabled (its schedule paused). before-created: before the trigger existed. overlap-skipped: the fire before ' +
          'it was still running and the overlap policy starts nothing meanwhile. catchup-skipped: the schedule could not run until this time\'s ' +
          'catch-up window had closed. pending: no fire yet, but its catch-up window (+ MISSED_FIRE_GRACE_MS) is still open. missed: none of these ' +
          '(it also emitted trigger.missed once).',
      ),
    fireId: z.uuid().nullable().describe('The fire recorded for this time (GET …/fires/:fireId)'),
    runId: z.uuid().nullable().describe('The run it started (linked triggers)'),
    firedAt: timestamp.nullable().describe('When that fire was recorded'),
    lagMs: z.number().int().nullable().describe('firedAt − scheduledAt, in ms'),
  })
  .meta({ id: 'ExpectedFire' });

export const previewQuery = z.object({
  n: z.coerce.number().int().min(1).max(100).default(10).describe('How many times, 1–100'),
});

export const previewTimeSchema = z
  .object({
    at: timestamp.describe('When it will fire (UTC)'),
    localTime: z.string().describe("On the wall clock of the trigger's time zone, with its offset"),
  })
  .meta({ id: 'PreviewTime' });

export const schedulePreviewQuery = z.object({
  cronExpression: cronExpression.describe('As a trigger\'s configJson.cronExpression'),
  timezone: timezone.describe('IANA time zone the expression is read in (default UTC)'),
  n: previewQuery.shape.n,
});
