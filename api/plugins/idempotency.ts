import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { RequestGuardsRepository } from '../../db/repositories/request-guards';
import type { SecretBox } from '../../lib/secrets';
import { ConflictError, UnprocessableError, ValidationError } from '../errors';

const TTL_HOURS = 24;

/**
 * `Idempotency-Key` on authenticated POSTs (docs/api.md § Idempotency): the first response is stored per
 * (caller, key) for 24 h and replayed for a repeat with the same body; a different body gets 422,
 * a repeat while the first is still running gets 409. 5xx and 429 responses are not stored, so the
 * client can retry them (a 429's Retry-After would mean nothing if the 429 were replayed for 24 h). A stored response may show a secret in full (the request that set it), so it is
 * sealed like every other secret, and the request fingerprint is an HMAC, not a plain hash.
 */
export function supportIdempotencyKeys(app: FastifyInstance, guards: RequestGuardsRepository, secrets: SecretBox, fingerprintKey: Buffer): void {
  app.addHook('preHandler', async (request, reply) => {
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || key === undefined || !request.caller) return;
    if (typeof key !== 'string' || key.length < 1 || key.length > 255) {
      throw new ValidationError('Idempotency-Key header: must be 1–255 characters');
    }
    const requestHash = createHmac('sha256', fingerprintKey)
      // The account acted in is part of the request: the same key and body sent to another account is another request.
      .update(`${request.method} ${request.url} ${request.caller.accountId}\n${JSON.stringify(request.body ?? null)}`)
      .digest('hex');
    const existing = await guards.claimIdempotencyKey(request.caller.userId, key, requestHash, TTL_HOURS);
    if (!existing) {
      request.idempotency = { callerId: request.caller.userId, key };
      return;
    }
    if (existing.request_hash !== requestHash) {
      throw new UnprocessableError('Idempotency-Key was already used with a different request');
    }
    if (existing.status_code === null) throw new ConflictError('A request with this Idempotency-Key is still in progress');
    reply.header('Idempotent-Replayed', 'true');
    return reply
      .code(existing.status_code)
      .type('application/json; charset=utf-8')
      .serializer((payload: unknown) => payload as string)
      .send(existing.response_body === null ? '' : secrets.open(existing.response_body));
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claim = request.idempotency;
    if (!claim) return payload;
    request.idempotency = undefined;
    if (reply.statusCode >= 500 || reply.statusCode === 429) {
      await guards.releaseIdempotencyKey(claim.callerId, claim.key);
    } else {
      await guards.completeIdempotencyKey(claim.callerId, claim.key, reply.statusCode, secrets.seal(typeof payload === 'string' ? payload : ''));
    }
    return payload;
  });
}
