import { z } from 'zod';
import { WEBHOOK_PATH } from './trigger-configs';

/** Any JSON value: the sender's payload, passed on as it came. */
export const hookPayload = z.unknown().describe('Any JSON value (≤ 1 MiB); passed on as data.payload / the run\'s input.payload');

export const signatureHeaders = z.looseObject({
  'webhook-id': z.string().optional().describe('Standard Webhooks message id; a repeated id is accepted again but counted and emitted once'),
  'webhook-timestamp': z.string().optional().describe('Unix seconds; refused when more than 5 minutes off'),
  'webhook-signature': z.string().optional().describe('"v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">", space-separated if several'),
});

export const webhookHookAccepted = z
  .object({
    id: z.uuid().describe('The first emitted event'),
    eventIds: z.array(z.uuid()).describe('One event per type in the webhook\'s events, in that order'),
  })
  .meta({ id: 'WebhookHookAccepted' });

/** A path that can't be a webhookPath names no trigger: 404 like any malformed id. */
export const triggerHookParams = z.object({ webhookPath: z.string().regex(WEBHOOK_PATH) });

export const triggerTokenHeaders = z.looseObject({
  'x-trigger-token': z.string().optional().describe('The trigger\'s configJson.secretToken (401 when missing or wrong)'),
});
