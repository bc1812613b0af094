import { z } from 'zod';
import { ALL_EVENTS, EVENT_TYPES, INCOMING_WEBHOOK_EVENT_TYPES } from '../../lib/events';
import { timestamp } from './common';
import { documentedAs } from './documentation';

export const WEBHOOK_DIRECTIONS = ['incoming', 'outgoing'] as const;

const URL_PROBLEM = 'must be an absolute http or https URL';

/** Shape only; whether the host is public is checked by the service (it may need DNS). */
const targetUrl = z
  .string()
  .trim()
  .max(2000)
  .superRefine((value, ctx) => {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: URL_PROBLEM });
      return;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: URL_PROBLEM });
    // Credentials in a URL end up in logs and delivery records; a receiver should check the signature instead.
    else if (parsed.username || parsed.password) ctx.addIssue({ code: 'custom', message: 'must not contain credentials (user:password@)' });
  })
  .describe(
    'Outgoing: the target, an absolute http(s) URL (≤ 2000 characters, no credentials); private, loopback and link-local ' +
      'addresses are refused unless ALLOW_PRIVATE_TARGETS, and so is a name that does not resolve within 3 s. Values of ' +
      'query parameters whose name contains key, token, secret, password, sig or auth (any case) are secrets: masked on ' +
      'read, and the url sent back exactly as read keeps them. Incoming: ignored if sent; the response shows the display URL ' +
      '{PUBLIC_BASE_URL}/api/hooks/webhooks/{id} that senders post to.',
  );

const WHSEC_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Standard Webhooks form: "whsec_" + base64 of 24–64 random bytes. */
function isValidWhsec(secret: string): boolean {
  const encoded = secret.slice(WHSEC_PREFIX.length);
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) return false;
  const bytes = Buffer.from(encoded, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

const secret = z
  .string()
  .min(8)
  .max(256)
  .refine((s) => !s.startsWith(WHSEC_PREFIX) || isValidWhsec(s), {
    message: 'a "whsec_" secret must be followed by base64 encoding 24–64 bytes',
  })
  .describe(
    'HMAC-SHA256 signing secret (Standard Webhooks), 8–256 characters. "whsec_" + base64 is decoded; anything else is used ' +
      'as raw bytes. Stored encrypted; responses show it in full only to the request that set it, "••••" + last 4 otherwise. ' +
      'In an update, null removes it and the masked value sent back keeps it.',
  );

export const webhookEvent = z.enum([...EVENT_TYPES, ALL_EVENTS], {
  error: () => `must be "${ALL_EVENTS}" or one of ${EVENT_TYPES.join(', ')}`,
});

const events = z
  .array(webhookEvent)
  .min(1)
  .max(50)
  .describe(
    'Outgoing: the event types delivered, "*" for every type (default ["*"]). Incoming: the event types each received request ' +
      'is emitted as: only "webhook.received" (the default); the other types are reserved for events the platform emits, and ' +
      '"*" is not allowed. Duplicates are removed.',
  );

const writable = {
  name: z.string().trim().min(1).max(200),
  url: targetUrl,
  secret: secret.nullable(),
  events,
  direction: z.enum(WEBHOOK_DIRECTIONS).describe('Default "outgoing"'),
  enabled: z.boolean().describe('Default true; false pauses the webhook without deleting it'),
};

const createFields = {
  name: writable.name,
  secret: writable.secret.optional(),
  enabled: writable.enabled.optional(),
};

/**
 * What the document shows of a create (documentation.ts): one variant per direction, since what a create needs
 * depends on it, as the service checks it: an outgoing webhook needs its target, an incoming one emits only the
 * types a received request may be (the others are reserved for the platform's own events).
 */
const createDocumentation = z
  .union([
    z
      .strictObject({
        ...createFields,
        direction: z.literal('outgoing').optional().describe('Default "outgoing"'),
        url: targetUrl,
        events: events.optional().describe('The event types delivered, "*" for every type (default ["*"]). Duplicates are removed.'),
      })
      .meta({ title: 'outgoing', examples: [{ name: 'Billing events', url: 'https://hooks.example.com/agent-platform', events: ['agent.completed', 'agent.failed'] }] }),
    z
      .strictObject({
        ...createFields,
        direction: z.literal('incoming'),
        url: targetUrl.optional().describe('Ignored when sent (but must be an absolute http(s) URL): the response shows {PUBLIC_BASE_URL}/api/hooks/webhooks/{id}'),
        events: z
          .array(z.enum(INCOMING_WEBHOOK_EVENT_TYPES as [string, ...string[]]))
          .min(1)
          .max(50)
          .optional()
          .describe('The event types each received request is emitted as (default ["webhook.received"]); the others are reserved for events the platform emits'),
      })
      .meta({ title: 'incoming', examples: [{ name: 'From the CRM', direction: 'incoming' }] }),
  ])
  .meta({ id: 'CreateWebhook' });

export const createWebhookBody = documentedAs(
  z.strictObject({
    ...writable,
    url: writable.url.optional(),
    secret: writable.secret.optional(),
    events: writable.events.optional(),
    direction: writable.direction.optional(),
    enabled: writable.enabled.optional(),
  }),
  createDocumentation,
);
export type CreateWebhookInput = z.infer<typeof createWebhookBody>;

export const updateWebhookBody = z
  .strictObject(writable)
  .partial()
  .describe(
    'Any subset of the writable fields. Turning a webhook outgoing needs a url in the same request; turning it incoming ' +
      'drops the stored target.',
  )
  .meta({ id: 'UpdateWebhook' });
export type UpdateWebhookInput = z.infer<typeof updateWebhookBody>;

export const webhookSchema = z
  .object({
    id: z.uuid(),
    accountId: z.uuid(),
    name: z.string(),
    url: z.string().describe('Outgoing: the target. Incoming: the display URL senders post to.'),
    secret: z.string().nullable().describe('Masked ("••••" + last 4) except in the response of the request that set it'),
    events: z.array(z.string()),
    direction: z.enum(WEBHOOK_DIRECTIONS),
    enabled: z.boolean(),
    disabledReason: z
      .string()
      .nullable()
      .describe(
        'Read-only: why the engine disabled this outgoing webhook (every delivery attempt failed for WEBHOOK_DISABLE_AFTER), e.g. ' +
          '"every delivery attempt failed since 2026-11-20T09:00:00.000Z (WEBHOOK_DISABLE_AFTER=5d)"; null otherwise. Cleared when it is enabled again.',
      ),
    triggerCount: z.int().min(0).describe('Read-only: events handed to an outgoing webhook, or requests accepted by an incoming one'),
    lastTriggered: timestamp.nullable().describe('Read-only'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Webhook' });
