import { z } from 'zod';
import { maxJsonBytes, timestamp } from './common';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled'] as const;

/** A delivery of one webhook; a malformed id answers 404 like any path id. */
export const deliveryParams = z.object({ id: z.uuid(), deliveryId: z.uuid() });

export const deliverySchema = z
  .object({
    id: z.uuid(),
    eventId: z.uuid().describe('The event delivered; also the `webhook-id` header of every attempt, retries included'),
    eventType: z.string(),
    status: z
      .enum(DELIVERY_STATUSES)
      .describe('pending: an attempt is due; succeeded: a 2xx arrived; failed: the last scheduled attempt failed; cancelled: the webhook was disabled'),
    attempts: z.int().min(0).describe('Attempts made so far, manual retries included'),
    lastStatusCode: z.int().nullable().describe('HTTP status of the last attempt; null when it got no response or none was made yet'),
    lastError: z.string().nullable().describe('Why the last attempt failed (HTTP status, timeout, refused target, connection error)'),
    nextAttemptAt: timestamp.nullable().describe('When the next attempt is due; null unless pending'),
    createdAt: timestamp,
  })
  .meta({ id: 'Delivery' });

export const deliveryAttemptSchema = z
  .object({
    attempt: z.int().min(1).describe('1-based position in its generation\'s schedule'),
    generation: z.int().min(0).describe('0 for the scheduled attempts; each manual retry is the next generation'),
    statusCode: z.int().nullable(),
    error: z.string().nullable(),
    durationMs: z.int().min(0),
    responseSnippet: z
      .string()
      .max(1024)
      .nullable()
      .describe(
        "The first 1 KiB (1,024 bytes of UTF-8) at most of the receiver's response body, cut before a character that would not fit; " +
          'null when there was no response, the body was empty, or it was not text (a binary media type, a compressed body, bytes that are not UTF-8)',
      ),
    createdAt: timestamp,
  })
  .meta({ id: 'DeliveryAttempt' });

export const deliveryDetailSchema = deliverySchema
  .extend({
    attemptsDetail: z
      .array(deliveryAttemptSchema)
      .max(20)
      .describe('The last 20 attempts at most, oldest first; GET …/deliveries/:deliveryId/attempts pages them all (`attempts` counts them)'),
  })
  .meta({ id: 'DeliveryDetail' });

export const testEventSchema = z
  .object({ eventId: z.uuid().describe('The webhook.test event; its delivery shows in the delivery log shortly') })
  .meta({ id: 'WebhookTestEvent' });

export const testEventBody = z
  .strictObject({
    payload: maxJsonBytes(z.unknown(), 64 * 1024)
      .optional()
      .describe('Any JSON value (≤ 64 KiB serialized), delivered as data.payload, to try a receiver on a body of your choosing'),
  })
  // No body at all reaches validation as null.
  .nullish()
  .meta({ id: 'WebhookTest', description: 'Optional; no body or an empty object sends the default test event.' });

// ---- recoveries (POST /api/webhooks/:id/recover) ----

/** The longest window one recovery covers. */
export const MAX_RECOVERY_WINDOW_DAYS = 30;

const instant = z.iso.datetime({ offset: true });

export const recoverBody = z
  .strictObject({
    since: instant.describe('ISO 8601 instant: deliveries created at or after it are recovered'),
    until: instant
      .optional()
      .describe(`ISO 8601 instant, exclusive; default: now. After since, and at most ${MAX_RECOVERY_WINDOW_DAYS} days after it`),
  })
  .meta({ id: 'RecoverDeliveries' });
export type RecoverBody = z.infer<typeof recoverBody>;

export const recoveryParams = z.object({ id: z.uuid(), recoveryId: z.uuid() });

export const recoverySchema = z
  .object({
    id: z.uuid(),
    webhookId: z.uuid(),
    since: timestamp,
    until: timestamp,
    status: z
      .enum(['running', 'completed', 'failed'])
      .describe('running: deliveries are still being handed their new attempt; completed: every one has been; failed: the recovery stopped (the webhook was disabled or turned incoming, or the engine failed)'),
    total: z.int().min(0).describe('Failed deliveries created in the window when the recovery was asked for'),
    attempted: z.int().min(0).describe('Of those, the ones given a new attempt so far (a delivery retried or deleted meanwhile is skipped)'),
    succeeded: z.int().min(0).describe('Of the attempted, those whose new attempt succeeded (so far)'),
    failed: z.int().min(0).describe('Of the attempted, those whose new attempt failed (so far)'),
    createdAt: timestamp,
    completedAt: timestamp.nullable().describe('When it stopped running; null while running'),
  })
  .meta({ id: 'DeliveryRecovery' });
