import { z } from 'zod';
import { timestamp } from './common';

export const FIRE_SOURCES = ['schedule', 'manual', 'webhook', 'event'] as const;
export const FIRE_STATUSES = ['fired', 'skipped', 'throttled', 'queued', 'running', 'succeeded', 'failed'] as const;

export const fireSchema = z
  .object({
    id: z.uuid(),
    firedAt: timestamp.describe('When the fire was recorded'),
    source: z.enum(FIRE_SOURCES).describe('schedule: its cron/schedule; manual: POST …/fire; webhook: its hook URL; event: a matching event'),
    runId: z.uuid().nullable().describe('The agent run it started (linked triggers only)'),
    status: z
      .enum(FIRE_STATUSES)
      .describe(
        "'skipped': the trigger was disabled, or its agent a template or paused, when the fire ran (not counted, no run); " +
          "'throttled': a schedule or event fire over the account's FIRES_PER_MINUTE (not counted, no run, no event); " +
          "the run's status when it started one; else 'fired'",
      ),
    scheduledAt: timestamp.nullable().describe('Schedule fires: the time it was scheduled for (firedAt - scheduledAt is the lag)'),
  })
  .meta({ id: 'Fire' });

export const fireParams = z.object({ id: z.uuid(), fireId: z.uuid() });

export const fireDetailSchema = fireSchema
  .extend({
    payload: z
      .unknown()
      .describe(
        "What it fired with: manual: the body's payload; webhook: the JSON body its hook received; event: the event's data; " +
          'schedule: null. A linked agent run gets it as input.payload.',
      ),
  })
  .meta({ id: 'FireDetail' });

export const fireBody = z
  .strictObject({
    payload: z.unknown().optional().describe('Any JSON value; handed to the linked agent\'s run as input.payload'),
  })
  // No body at all reaches validation as null.
  .nullish()
  .meta({ id: 'FireTrigger', description: 'Optional; no body or an empty object fires with payload null.' });
export type FireBody = z.infer<typeof fireBody>;

export const fireAccepted = z
  .object({ fireId: z.uuid().describe('The id the fire is recorded with (GET …/fires) once it has run') })
  .meta({ id: 'FireAccepted' });
