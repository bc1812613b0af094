import { z } from 'zod';
import { DELIVERY_STATUSES } from './deliveries';
import { timestamp } from './common';
import { expectedFireSchema, expectedFiresQuery } from './schedule-truth';

/** As …/expected-fires' query, with at most 200 entries a page (each entry lists up to 20 deliveries). */
export const timelineQuery = expectedFiresQuery.extend({
  limit: z.coerce.number().int().min(1).max(200).default(200).describe('Page size, 1–200'),
});

/** A delivery of an event that followed a fire (its own event, or its run's result). */
export const fireDeliverySchema = z
  .object({
    id: z.uuid(),
    webhookId: z.uuid().describe('The outgoing webhook it was handed to (GET /api/webhooks/:id/deliveries/:deliveryId)'),
    webhookName: z.string(),
    eventId: z.uuid(),
    eventType: z.string().describe('agent.triggered or trigger.fired (the fire\'s own event); agent.completed or agent.failed (its run\'s result)'),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.int().min(0),
    lastStatusCode: z.int().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: timestamp.nullable(),
    createdAt: timestamp,
  })
  .meta({ id: 'FireDelivery' });

export const timelineEntrySchema = expectedFireSchema
  .extend({
    runStatus: z
      .enum(['queued', 'running', 'succeeded', 'failed'])
      .nullable()
      .describe('The status now of the run the fire started (runId); null when it started none'),
    deliveries: z
      .array(fireDeliverySchema)
      .max(20)
      .describe(
        'The deliveries of the fire\'s own event and of its run\'s result event, oldest first (at most two per outgoing webhook): the first 20 at most; ' +
          'GET …/fires/:fireId/deliveries lists them all',
      ),
    moreDeliveries: z.int().min(0).describe('How many more deliveries followed the fire than `deliveries` lists'),
  })
  .meta({ id: 'TimelineEntry' });
