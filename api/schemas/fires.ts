import { z } from 'zod';
import { FIRE_REASONS } from '../../db/repositories/fires';
import { timestamp } from './common';

export const FIRE_SOURCES = ['schedule', 'manual', 'webhook', 'event'] as const;
export const FIRE_STATUSES = ['fired', 'skipped', 'throttled', 'queued', 'running', 'waiting', 'succeeded', 'failed'] as const;

export const fireSchema = z
  .object({
    id: z.uuid(),
    firedAt: timestamp.describe('When the fire was recorded'),
    source: z.enum(FIRE_SOURCES).describe('schedule: its cron/schedule; manual: POST …/fire; webhook: its hook URL; event: a matching event'),
    runId: z.uuid().nullable().describe('The agent run it started (linked triggers only)'),
    status: z
      .enum(FIRE_STATUSES)
      .describe(
        "'skipped': the fire did not go ahead (not counted, no run, no event; reason says why); " +
          "'throttled': a schedule or event fire over the account's FIRES_PER_MINUTE (not counted, no run, no event); " +
          "the run's status when it started one; else 'fired'",
      ),
    reason: z
      .enum(FIRE_REASONS)
      .nullable()
      .describe(
        'Why a skipped or throttled fire did not go ahead; null for a fire that did. trigger_disabled: the trigger was disabled when ' +
          'the fire ran; agent_paused / agent_template: its agent was paused or a template; filter_budget: an event fire whose filter ' +
          "was not evaluated within the event's work budget (the event may have matched it); model_tokens_per_day: its agent's runs " +
          "use the model and the account had spent MODEL_TOKENS_PER_DAY for the day (UTC); fires_per_minute: throttled, over the " +
          "account's FIRES_PER_MINUTE. Fires recorded before reasons were kept: null (throttled ones: fires_per_minute)",
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

export const fireAccepted = z
  .object({ fireId: z.uuid().describe('The id the fire is recorded with (GET …/fires) once it has run') })
  .meta({ id: 'FireAccepted' });
