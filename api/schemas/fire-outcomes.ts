import { z } from 'zod';
import { DELIVERY_STATUSES } from './deliveries';
import { timestamp } from './common';
import { expectedFireSchema } from './schedule-truth';

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
      .describe('Every delivery of the fire\'s own event and of its run\'s result event, oldest first (at most two per outgoing webhook)'),
  })
  .meta({ id: 'TimelineEntry' });
