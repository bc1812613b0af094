import type { Schemas } from '../../api/client';

export type Webhook = Schemas['Webhook'];
export type Delivery = Schemas['Delivery'];
export type DeliveryDetail = Schemas['DeliveryDetail'];
export type Recovery = Schemas['DeliveryRecovery'];
export type StatsSeries = Schemas['WebhookStatsSeries'];

export const DELIVERY_STATUS_COLOR: Record<string, string> = { pending: 'blue', succeeded: 'teal', failed: 'red', cancelled: 'gray' };

/** A Standard Webhooks signing secret: "whsec_" and the base64 of 32 random bytes (the browser's CSPRNG). */
export function generateSigningSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}
