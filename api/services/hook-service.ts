import { createHash, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from 'standardwebhooks';
import type { Db } from '../../db/pool';
import type { HooksRepository } from '../../db/repositories/hooks';
import type { RequestGuardsRepository } from '../../db/repositories/request-guards';
import type { Engine } from '../../engine';
import { emittedByIncomingWebhook } from '../../lib/events';
import { openConfig } from '../../lib/secret-config';
import { TRIGGER_SECRET_PATHS } from '../../lib/secret-paths';
import { webhookFor } from '../../lib/standard-webhooks';
import type { SecretBox } from '../../lib/secrets';
import { NotFoundError, TooManyRequestsError, UnauthorizedError } from '../errors';
import { fireNow, type FireNowDeps } from './fire-now';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Constant time whatever the lengths: equal-length digests are compared, never the strings themselves. */
function tokensMatch(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

export type SignatureHeaders = Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string | undefined>;

/**
 * The public hook endpoints (docs/api.md § Signatures; docs/api.md § Webhooks "Incoming", § Triggers "Hook"): each checks its own
 * secret, records what must happen in one transaction (outbox), and answers at once; the events and
 * the fire are carried out durably by the engine.
 */
export function createHookService(deps: {
  db: Db;
  hooks: HooksRepository;
  secrets: SecretBox;
  /** The engine's unit of work: each event and its fan-out in the request's transaction, handed off after the commit. */
  engine: Pick<Engine, 'transaction'>;
  guards: RequestGuardsRepository;
  /** HOOK_RATE_LIMIT: requests per second each hook accepts. */
  rateLimitPerSecond: number;
  /** FIRES_PER_MINUTE of the trigger hooks' accounts. */
  fireAdmission: FireNowDeps;
}) {
  const { hooks, secrets, guards, fireAdmission, engine } = deps;

  /**
   * docs/api.md § Rate limits: at most HOOK_RATE_LIMIT requests per second per hook, in a fixed window counted in
   * Postgres like the auth limit, so every API instance shares it. Only a hook that exists is counted
   * (no counter row for a guessed id), and before its secret is checked: requests with a wrong
   * signature or token cost the flooder's budget too.
   */
  async function withinRateLimit(key: string): Promise<void> {
    refuseOverLimit(await guards.hitRateLimitUpTo(key, 1000, deps.rateLimitPerSecond));
  }
  function refuseOverLimit({ allowed, ttlMs }: { allowed: boolean; ttlMs: number }): void {
    if (!allowed) {
      const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
      throw new TooManyRequestsError(`Too many requests to this hook (at most ${deps.rateLimitPerSecond} per second); retry in ${seconds} s`, seconds);
    }
  }

  return {
    /**
     * A request to an incoming webhook: checked against its secret (when it has one), counted and
     * emitted as each of its event types with `data: { webhookId, payload }`. A signed `webhook-id`
     * seen before answers the first request's ids and changes nothing (senders retry).
     */
    async receiveWebhook(id: string, request: { rawBody: string; payload: unknown; headers: SignatureHeaders }) {
      // Found and counted against its limit in one statement (withinRateLimit's counter).
      const webhook = await hooks.findIncomingWebhookCounted(id, { key: `hook:webhook:${id}`, windowMs: 1000, max: deps.rateLimitPerSecond });
      if (!webhook) throw new NotFoundError('Webhook');
      refuseOverLimit(webhook);
      let messageId: string | null = null;
      if (webhook.secret_sealed !== null) {
        const { headers } = request;
        if (!headers['webhook-id'] || !headers['webhook-timestamp'] || !headers['webhook-signature']) {
          throw new UnauthorizedError('Missing signature: send webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks)');
        }
        try {
          webhookFor(secrets.open(webhook.secret_sealed)).verify(request.rawBody, headers as Record<string, string>, { jsonParse: false });
        } catch (err) {
          if (!(err instanceof WebhookVerificationError)) throw err;
          throw new UnauthorizedError(`Invalid signature: ${err.message.toLowerCase()}`);
        }
        messageId = headers['webhook-id'];
      }

      const result = await engine.transaction(async (tx, unit) => {
        if (messageId !== null && !(await hooks.claimReceipt(id, messageId, tx))) {
          return { duplicate: true, eventIds: await hooks.receiptEvents(id, messageId, tx) };
        }
        // Emitted as the types the webhook had when it was read; counted last, under its row's lock, which every
        // call of this webhook takes in turn: held over one statement and the commit
        // (docs/adr/0012-fewer-round-trips-per-hook.md). Disabled or turned outgoing since it was read → nothing happened.
        const eventIds: string[] = [];
        for (const type of emittedByIncomingWebhook(webhook.events)) {
          const event = await unit.emit({ accountId: webhook.account_id, type, data: { webhookId: id, payload: request.payload } });
          eventIds.push(event.id);
        }
        if (messageId !== null) await hooks.setReceiptEvents(id, messageId, eventIds, tx);
        if (!(await hooks.countIncoming(id, tx))) throw new NotFoundError('Webhook');
        return { duplicate: false, eventIds };
      });
      return { id: result.eventIds[0]!, eventIds: result.eventIds };
    },

    /**
     * `POST /api/hooks/triggers/:webhookPath`: the enabled webhook trigger with that path, fired with the
     * body as payload, within its account's FIRES_PER_MINUTE (429 over it, counted only once the token matched).
     */
    async fireTriggerHook(webhookPath: string, token: string | undefined, payload: unknown): Promise<{ fireId: string }> {
      const trigger = await hooks.findWebhookTrigger(webhookPath);
      if (!trigger) throw new NotFoundError('Trigger');
      await withinRateLimit(`hook:trigger:${trigger.id}`);
      const expected = openConfig(trigger.config_json, TRIGGER_SECRET_PATHS.webhook, secrets).secretToken;
      if (typeof expected !== 'string') throw new NotFoundError('Trigger'); // a webhook trigger always has one; never fire without
      if (token === undefined) throw new UnauthorizedError('Missing X-Trigger-Token header');
      if (!tokensMatch(token, expected)) throw new UnauthorizedError('Invalid X-Trigger-Token');
      return { fireId: await fireNow(fireAdmission, trigger, { source: 'webhook', payload: payload ?? null }) };
    },
  };
}
export type HookService = ReturnType<typeof createHookService>;
