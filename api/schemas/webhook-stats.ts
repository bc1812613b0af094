import { z } from 'zod';
import { timestamp } from './common';

const windowSchema = z
  .object({
    deliveries: z
      .object({ succeeded: z.number().int(), failed: z.number().int(), pending: z.number().int(), cancelled: z.number().int() })
      .describe('Deliveries created in the window, by their status now'),
    attempts: z
      .object({ succeeded: z.number().int().describe('Answered 2xx'), failed: z.number().int().describe('Any other status, a timeout or a connection error') })
      .describe('Attempts made in the window (manual retries included)'),
    attemptLatencyMs: z
      .object({ p50: z.number().int().nullable(), p99: z.number().int().nullable() })
      .describe('Time from sending an attempt to its answer or error, over the attempts of the window (null: none)'),
  })
  .meta({ id: 'WebhookStatsWindow' });

const attemptSchema = z
  .object({
    at: timestamp.describe('When the attempt was recorded'),
    deliveryId: z.uuid(),
    statusCode: z.number().int().nullable().describe('The HTTP status; null when there was none (timeout, refused, …)'),
    error: z.string().nullable(),
    durationMs: z.number().int(),
  })
  .meta({ id: 'WebhookAttempt' });

export const webhookStatsSchema = z
  .object({
    webhookId: z.uuid(),
    enabled: z.boolean(),
    generatedAt: timestamp,
    pendingDeliveries: z.number().int().describe('Deliveries pending now, whenever they were created'),
    last24h: windowSchema,
    last7d: windowSchema,
    lastSuccess: attemptSchema.nullable().describe('The newest attempt answered 2xx (kept RETENTION_DAYS)'),
    lastFailure: attemptSchema.nullable().describe('The newest attempt that failed'),
  })
  .meta({ id: 'WebhookStats' });
