import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/pool';
import type { RequestGuardsRepository } from '../../db/repositories/request-guards';
import { WriteUnit } from '../../db/write-unit';
import type { SecretBox } from '../../lib/secrets';
import { ConflictError, UnprocessableError, ValidationError } from '../errors';

/** How long a stored response is replayed. */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** The savepoint after the claim: an error answer rolls the request's work back to it. */
const WORK = 'request_work';

export interface IdempotencyDeps {
  db: Db;
  guards: RequestGuardsRepository;
  secrets: SecretBox;
  /** Keys the HMAC of the request fingerprint. */
  fingerprintKey: Buffer;
}

/**
 * `Idempotency-Key` on authenticated POSTs (docs/api.md § Idempotency): the first response is stored per (caller, key)
 * for 24 h and replayed for a repeat with the same body; a different body gets 422, a repeat while the
 * first is still running gets 409 at once. The request runs in a write unit (db/write-unit.ts): the
 * claim, the request's work and its stored response are one transaction, so a failure anywhere,
 * storing the response included, leaves nothing of the request and the key free. 5xx answers and those
 * with a Retry-After (429, a 409 for a state that passes) are rolled back and not stored, so the client can
 * retry them (a Retry-After would mean nothing if the answer were replayed for 24 h); any other error answer is stored with its work rolled back. A stored
 * response may show a secret in full (the request that set it), so it is sealed like every other
 * secret, and the request fingerprint is an HMAC, not a plain hash.
 */
/** The Idempotency-Key of a request the idempotency hook handles (an authenticated POST), or undefined. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  return request.method === 'POST' && request.caller && typeof key === 'string' ? key : undefined;
}

export function supportIdempotencyKeys(app: FastifyInstance, deps: IdempotencyDeps): void {
  const { db, guards, secrets, fingerprintKey } = deps;

  /** The unit the request's work runs in; `replayed` when the stored response was sent instead. */
  async function claim(request: FastifyRequest, reply: FastifyReply): Promise<WriteUnit | 'replayed' | undefined> {
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || key === undefined || !request.caller) return undefined;
    if (typeof key !== 'string' || key.length < 1 || key.length > 255) {
      throw new ValidationError('Idempotency-Key header: must be 1–255 characters');
    }
    const callerId = request.caller.userId;
    const requestHash = createHmac('sha256', fingerprintKey)
      // The account acted in is part of the request: the same key and body sent to another account is another request.
      .update(`${request.method} ${request.url} ${request.caller.accountId}\n${JSON.stringify(request.body ?? null)}`)
      .digest('hex');
    const unit = await WriteUnit.begin(db);
    let existing: Awaited<ReturnType<typeof guards.claimIdempotencyKey>>;
    try {
      existing = await guards.claimIdempotencyKey(callerId, key, requestHash, IDEMPOTENCY_TTL_HOURS, unit.client);
      if (!existing && request.routeOptions.config.callsTemporal) {
        // The claim commits alone and the handler holds no connection while Temporal answers; its answer is
        // stored (or the key freed) in a statement of its own (`complete`).
        await unit.commit();
        request.idempotency = { unit: null, callerId, key };
        return undefined;
      }
      if (!existing) {
        await unit.savepoint(WORK);
        request.idempotency = { unit, callerId, key };
        return unit;
      }
    } catch (err) {
      await unit.rollback();
      throw err;
    }
    await unit.rollback();
    if (existing.request_hash !== requestHash) {
      throw new UnprocessableError('Idempotency-Key was already used with a different request');
    }
    if (existing.status_code === null) throw new ConflictError('A request with this Idempotency-Key is still in progress');
    reply.header('Idempotent-Replayed', 'true');
    reply
      .code(existing.status_code)
      .type('application/json; charset=utf-8')
      .serializer((payload: unknown) => payload as string)
      .send(existing.response_body === null ? '' : secrets.open(existing.response_body));
    return 'replayed';
  }

  // Callback style, so that the handler runs inside `unit.run` (an async hook's context would not
  // reach it): every query of the handler joins the unit's transaction. A request without a key (every
  // read) passes straight through, as in the two hooks below: no promise made for it (api/app.ts).
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method !== 'POST' || request.headers['idempotency-key'] === undefined) return done();
    claim(request, reply).then(
      (unit) => {
        // A replay is already being sent: the handler must not run (`done` is not called).
        if (unit === 'replayed') return;
        if (unit) unit.run(() => done());
        else done();
      },
      (err: Error) => done(err),
    );
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const claimed = request.idempotency;
    if (!claimed) return done(null, payload);
    request.idempotency = undefined;
    complete(request, reply, claimed, payload).then((sent) => {
      // As for an async hook: an error thrown while the response is written goes to the error handler.
      try {
        done(null, sent);
      } catch (err) {
        done(err as Error);
      }
    }, done);
  });

  /** Keeps the response of a request that claimed its key, with the work it did; or rolls both back. */
  async function complete(request: FastifyRequest, reply: FastifyReply, claimed: NonNullable<FastifyRequest['idempotency']>, payload: unknown): Promise<unknown> {
    const { unit } = claimed;
    if (!unit) return completeDetached(request, reply, claimed, payload);
    // Error answers that say when to ask again (429, a 409 with Retry-After) describe a passing state; a
    // success is kept whatever its headers.
    if (reply.statusCode >= 500 || reply.statusCode === 429 || (reply.statusCode >= 400 && reply.hasHeader('retry-after'))) {
      await unit.rollback();
      return payload;
    }
    try {
      // An error answer changes nothing, whatever was written before the error was raised.
      if (reply.statusCode >= 400) await unit.rollbackTo(WORK);
      await guards.completeIdempotencyKey(claimed.callerId, claimed.key, reply.statusCode, secrets.seal(typeof payload === 'string' ? payload : ''), unit.client);
      await unit.commit();
      return payload;
    } catch (err) {
      // The response could not be stored, so the work is not kept either: the client may retry.
      await unit.rollback();
      request.log.error({ err }, 'storing the idempotent response failed; the request was rolled back');
      reply.code(500).type('application/json; charset=utf-8').removeHeader('location');
      return JSON.stringify({ message: 'Internal server error' });
    }
  }

  /**
   * The answer of a request whose key was claimed alone (a route that `callsTemporal`): stored as any other,
   * or the key freed for an answer that is not kept (5xx, 429, one with Retry-After). Its work committed as it went.
   */
  async function completeDetached(request: FastifyRequest, reply: FastifyReply, claimed: NonNullable<FastifyRequest['idempotency']>, payload: unknown): Promise<unknown> {
    try {
      if (reply.statusCode >= 500 || reply.statusCode === 429 || (reply.statusCode >= 400 && reply.hasHeader('retry-after'))) {
        await guards.releaseIdempotencyKey(claimed.callerId, claimed.key);
      } else {
        await guards.completeIdempotencyKey(claimed.callerId, claimed.key, reply.statusCode, secrets.seal(typeof payload === 'string' ? payload : ''));
      }
    } catch (err) {
      // The key stays claimed without an answer: a repeat is told it is in progress until IDEMPOTENCY_TTL_HOURS.
      request.log.error({ err }, 'storing the idempotent response failed');
    }
    return payload;
  }

  // A unit whose response was never sent (onSend did not run) is not left holding its connection.
  app.addHook('onResponse', (request, _reply, done) => {
    const claimed = request.idempotency;
    if (!claimed) return done();
    request.idempotency = undefined;
    if (!claimed.unit) return void guards.releaseIdempotencyKey(claimed.callerId, claimed.key).then(() => done(), done);
    claimed.unit.rollback().then(() => done(), done);
  });
}
