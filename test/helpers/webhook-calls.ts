import assert from 'node:assert/strict';
import { api } from './api';
import type { TestUser } from './app';
import type { EngineHarness } from './engine';
import { waitFor } from './processes';

/** A delivery as `GET /api/webhooks/:id/deliveries` lists it (the fields the engine tests read). */
export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

/** The webhook API calls of the engine tests, each asserting its status; `get` gives the suite's harness once it is started. */
export function webhookCalls(get: () => EngineHarness) {
  async function createWebhook(user: TestUser, fields: object) {
    const res = await api(get().app, user).post('/api/webhooks', { name: 'receiver', ...fields });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string; accountId: string };
  }
  async function deliveries(user: TestUser, webhookId: string) {
    const res = await api(get().app, user).get(`/api/webhooks/${webhookId}/deliveries`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as DeliveryView[];
  }
  async function webhook(user: TestUser, id: string) {
    const res = await api(get().app, user).get(`/api/webhooks/${id}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { enabled: boolean; disabledReason: string | null };
  }
  /** Waits until the webhook's only delivery satisfies `done`. */
  async function waitForDelivery(user: TestUser, webhookId: string, what: string, done: (d: DeliveryView) => boolean, timeoutMs = 20_000) {
    return waitFor(what, async () => {
      const list = await deliveries(user, webhookId);
      return list.length === 1 && done(list[0]!) && list[0]!;
    }, timeoutMs);
  }
  return { createWebhook, deliveries, webhook, waitForDelivery };
}
