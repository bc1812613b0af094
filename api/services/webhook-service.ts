import type { PageRequest } from '../../db/paging';
import { withTransaction, type Db } from '../../db/pool';
import { createDeliveriesRepository } from '../../db/repositories/deliveries';
import type { QuotasRepository } from '../../db/repositories/quotas';
import type { WebhookDirection, WebhookRow, WebhooksRepository, WebhookValues } from '../../db/repositories/webhooks';
import { ALL_EVENTS, INCOMING_WEBHOOK_EVENT_TYPES, isReservedForPlatform } from '../../lib/events';
import { maskSecret, type SecretBox } from '../../lib/secrets';
import { maskUrlSecrets, originOnly, restoreUrlSecrets, URL_MASK_MISMATCH } from '../../lib/url-secrets';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import { toWebhook, type Webhook } from '../mappers';
import type { CreateWebhookInput, UpdateWebhookInput } from '../schemas/webhooks';
import type { AuditTrail } from './audit-trail';
import type { Caller } from './auth-service';
import { restoreMaskedValue } from './masked-secrets';
import { refuseWhenFull, withinAccountQuota } from './quotas';
import type { TargetChecks } from './target-checks';

const DEFAULT_EVENTS: Record<WebhookDirection, string[]> = { outgoing: [ALL_EVENTS], incoming: ['webhook.received'] };
const URL_REQUIRED = 'body.url: is required for outgoing webhooks';

/**
 * Removes duplicates; "*" covers every other type, so a list holding it is just ["*"]. An incoming webhook
 * emits each listed type: "*" would mean nothing there, and the types the platform emits are reserved
 * (lib/events.ts), so both are refused. `sent` says whether the list came in this request (the message
 * then names the element) or was kept from before a direction change.
 */
function normalizeEvents(events: readonly string[], direction: WebhookDirection, sent: boolean): string[] {
  if (direction === 'outgoing') return events.includes(ALL_EVENTS) ? [ALL_EVENTS] : [...new Set(events)];
  const star = events.indexOf(ALL_EVENTS);
  if (star !== -1) {
    throw new ValidationError(
      sent
        ? `body.events.${star}: "${ALL_EVENTS}" is not allowed for incoming webhooks; list the event types each received request is emitted as`
        : `body.events: the current events include "${ALL_EVENTS}", which is not allowed for incoming webhooks; send events with the types to emit`,
    );
  }
  const reserved = events.findIndex(isReservedForPlatform);
  if (reserved !== -1) {
    const type = events[reserved]!;
    const allowed = INCOMING_WEBHOOK_EVENT_TYPES.join(', ');
    throw new ValidationError(
      sent
        ? `body.events.${reserved}: "${type}" is reserved for events the platform emits; an incoming webhook can emit only ${allowed}`
        : `body.events: the current events include "${type}", which an incoming webhook cannot emit (reserved for events the platform emits); send events`,
    );
  }
  return [...new Set(events)];
}

export function createWebhookService(deps: {
  db: Db;
  webhooks: WebhooksRepository;
  secrets: SecretBox;
  publicBaseUrl: string;
  targetChecks: TargetChecks;
  quotas: QuotasRepository;
  /** QUOTA_WEBHOOKS */
  quota: number;
  audit: AuditTrail;
}) {
  const { db, webhooks, secrets, publicBaseUrl, quotas, audit } = deps;
  const deliveries = createDeliveriesRepository(db);

  /** The SSRF guard on a url this request writes (docs/api.md § URL checks). */
  const checkTarget = (caller: Caller, url: string) => deps.targetChecks(caller.accountId, [{ url, field: 'body.url' }]);

  const openSecret = (row: WebhookRow) => (row.secret_sealed === null ? null : secrets.open(row.secret_sealed));

  /**
   * A row as a response shows it: secret query values in its url masked unless this request set them;
   * for a caller without canExport, the url as its origin followed by `/…` (docs/api.md § Secrets).
   */
  const shownUrl = (caller: Caller, row: WebhookRow, revealed: boolean): WebhookRow => {
    if (row.url === null || revealed) return row;
    return { ...row, url: caller.permissions.canExport ? maskUrlSecrets(row.url) : originOnly(row.url) };
  };

  /** GET and list: the secret and the url's secret query values masked. */
  const present = (caller: Caller, row: WebhookRow) => {
    const secret = openSecret(row);
    return toWebhook(shownUrl(caller, row, false), secret === null ? null : maskSecret(secret), publicBaseUrl);
  };

  /** A url sent back with its secret query values masked stands for the stored one (docs/api.md § Secrets). */
  function restoreUrl(sent: string, current: string | null): string {
    const url = restoreUrlSecrets(sent, current);
    if (url === null) throw new ValidationError(`body.url: ${URL_MASK_MISMATCH}`);
    return url;
  }

  /**
   * What a create must pass before anything waits on DNS: a full quota answers 403 first. Then the url's
   * check. A route runs this as its preflight (before an Idempotency-Key's transaction takes a
   * connection); the create runs it again, and finds the url already checked in the same request.
   */
  async function checkCreate(caller: Caller, input: CreateWebhookInput): Promise<void> {
    if ((input.direction ?? 'outgoing') !== 'outgoing' || input.url === undefined) return;
    await refuseWhenFull({ limit: deps.quota, plural: 'webhooks' }, 'account', () => quotas.countWebhooks(caller.accountId));
    await checkTarget(caller, restoreUrl(input.url, null));
  }

  /**
   * The state an update leads to, validated as a whole. `checkUrl` is the target to check (docs/api.md §
   * URL checks): only a url that changes, or one that a webhook turning outgoing gets.
   */
  function planUpdate(row: WebhookRow, patch: UpdateWebhookInput): { values: WebhookValues; shownSecret: string | null; checkUrl: string | null } {
    const direction = patch.direction ?? row.direction;
    let url: string | null = null;
    let checkUrl: string | null = null;
    if (direction === 'outgoing') {
      // An incoming webhook has no stored target to fall back on (nor one a mask could stand for).
      url = patch.url === undefined ? row.url : restoreUrl(patch.url, row.direction === 'outgoing' ? row.url : null);
      if (url === null) throw new ValidationError(URL_REQUIRED);
      if (url !== row.url || row.direction === 'incoming') checkUrl = url;
    }
    const events = normalizeEvents(patch.events ?? row.events, direction, patch.events !== undefined);

    const current = openSecret(row);
    let secret = current;
    let revealed = false;
    if (patch.secret === null) secret = null;
    else if (patch.secret !== undefined) ({ value: secret, revealed } = restoreMaskedValue(patch.secret, current, 'body.secret'));
    const secretSealed = secret === current ? row.secret_sealed : secret === null ? null : secrets.seal(secret);

    return {
      values: { name: patch.name ?? row.name, direction, url, secretSealed, events, enabled: patch.enabled ?? row.enabled },
      shownSecret: secret === null ? null : revealed ? secret : maskSecret(secret),
      checkUrl,
    };
  }

  return {
    checkCreate,

    async create(caller: Caller, input: CreateWebhookInput): Promise<Webhook> {
      const direction = input.direction ?? 'outgoing';
      // A url sent for an incoming webhook is ignored: its URL is the one we show. A masked value has nothing to stand for yet.
      const url = direction === 'outgoing' && input.url !== undefined ? restoreUrl(input.url, null) : null;
      if (direction === 'outgoing' && url === null) throw new ValidationError(URL_REQUIRED);
      const events = normalizeEvents(input.events ?? DEFAULT_EVENTS[direction], direction, input.events !== undefined);
      // A masked value has nothing to stand for yet: refused like any masked value that matches no secret.
      const secret = input.secret == null ? null : restoreMaskedValue(input.secret, null, 'body.secret').value;
      await checkCreate(caller, input);
      const row = await withTransaction(db, async (tx) => {
        await withinAccountQuota(quotas, tx, caller.accountId, { limit: deps.quota, plural: 'webhooks' }, quotas.countWebhooks);
        const inserted = await webhooks.insert(
          caller.accountId,
          { name: input.name, direction, url, secretSealed: secret === null ? null : secrets.seal(secret), events, enabled: input.enabled ?? true },
          tx,
        );
        await audit.record(tx, caller, 'webhook.create', inserted.id);
        return inserted;
      });
      return toWebhook(row, secret, publicBaseUrl); // the url as sent: this request set it
    },

    async get(caller: Caller, id: string): Promise<Webhook> {
      const row = await webhooks.findById(caller.accountId, id);
      if (!row) throw new NotFoundError('Webhook');
      return present(caller, row);
    },

    async list(caller: Caller, page: PageRequest) {
      const result = await webhooks.list(caller.accountId, page);
      return { ...result, items: result.items.map((row) => present(caller, row)) };
    },

    async update(caller: Caller, id: string, patch: UpdateWebhookInput): Promise<Webhook> {
      // The target check may wait seconds on DNS: do it before taking the row lock and a pooled connection.
      const seen = await webhooks.findById(caller.accountId, id);
      if (!seen) throw new NotFoundError('Webhook');
      const draft = planUpdate(seen, patch);
      if (draft.checkUrl !== null) await checkTarget(caller, draft.checkUrl);

      return withTransaction(db, async (tx) => {
        const row = await webhooks.findByIdForUpdate(caller.accountId, id, tx);
        if (!row) throw new NotFoundError('Webhook');
        // Re-planned on the locked row, in case a concurrent update changed it in between.
        const plan = planUpdate(row, patch);
        // A target nobody checked would need a lookup here, holding the row lock and a connection: ask again instead.
        if (plan.checkUrl !== null && plan.checkUrl !== draft.checkUrl) {
          throw new ConflictError('the webhook changed while its new url was being checked; send the update again');
        }
        const updated = await webhooks.update(caller.accountId, id, plan.values, tx);
        // Disabling stops its pending deliveries (docs/api.md § Webhooks); their workflows see them cancelled and stop.
        if (row.enabled && !plan.values.enabled) await deliveries.cancelPendingDeliveries(id, tx);
        await audit.record(tx, caller, 'webhook.update', id);
        return toWebhook(shownUrl(caller, updated!, patch.url !== undefined && plan.values.url !== row.url), plan.shownSecret, publicBaseUrl);
      });
    },

    async delete(caller: Caller, id: string): Promise<void> {
      await withTransaction(db, async (tx) => {
        if (!(await webhooks.delete(caller.accountId, id, tx))) throw new NotFoundError('Webhook');
        await audit.record(tx, caller, 'webhook.delete', id);
      });
    },
  };
}
export type WebhookService = ReturnType<typeof createWebhookService>;
