import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks (docs/api.md § Signatures), through the `standardwebhooks` package itself so that receivers using
 * it verify what we send and we verify what they send. A `whsec_` secret is base64 after the prefix
 * (the package's default); any other secret is its raw UTF-8 bytes.
 */
const WHSEC_PREFIX = 'whsec_';

export function webhookFor(secret: string): Webhook {
  return secret.startsWith(WHSEC_PREFIX) ? new Webhook(secret) : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
}

/** The three headers of one signed request; `webhook-id` is the event id, the same on every retry. */
export function standardWebhookHeaders(secret: string, messageId: string, body: string, now: Date): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': webhookFor(secret).sign(messageId, now, body),
  };
}
