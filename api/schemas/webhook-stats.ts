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

/** The windows a series covers, each in buckets of a fixed size. */
export const SERIES_WINDOWS = {
  '1h': { buckets: 60, bucketSeconds: 60 },
  '24h': { buckets: 24, bucketSeconds: 3_600 },
  '7d': { buckets: 28, bucketSeconds: 21_600 },
} as const;
export type SeriesWindow = keyof typeof SERIES_WINDOWS;

export const webhookStatsSeriesQuery = z.object({
  window: z
    .enum(Object.keys(SERIES_WINDOWS) as [SeriesWindow, ...SeriesWindow[]])
    .default('24h')
    .describe('1h: 60 buckets of a minute; 24h: 24 buckets of an hour; 7d: 28 buckets of 6 hours'),
});

const bucketSchema = z
  .object({
    at: timestamp.describe('Start of the bucket'),
    attempts: z.object({ succeeded: z.number().int(), failed: z.number().int() }).describe('Attempts made in the bucket (manual retries included)'),
    successRate: z.number().min(0).max(1).nullable().describe('succeeded / (succeeded + failed); null when no attempt was made'),
    attemptLatencyMs: z.object({ p50: z.number().int().nullable(), p99: z.number().int().nullable() }).describe('Null when no attempt was made'),
  })
  .meta({ id: 'WebhookStatsBucket' });

export const webhookStatsSeriesSchema = z
  .object({
    webhookId: z.uuid(),
    window: z.enum(Object.keys(SERIES_WINDOWS) as [SeriesWindow, ...SeriesWindow[]]),
    bucketSeconds: z.number().int(),
    generatedAt: timestamp,
    buckets: z.array(bucketSchema).describe('Every bucket of the window, oldest first, the last one holding now; empty buckets included'),
  })
  .meta({ id: 'WebhookStatsSeries' });
