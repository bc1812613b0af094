import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { standardWebhookHeaders } from '../../lib/standard-webhooks';

/** docs/api.md § Signatures: the headers of a signed delivery, checked with the `standardwebhooks` package and by hand. */
describe('standardWebhookHeaders', () => {
  const body = JSON.stringify({ id: 'evt', type: 'webhook.test', data: { ü: 'ünïcode' } });
  const now = new Date();

  it('a whsec_ secret is base64 after the prefix', () => {
    const key = randomBytes(32);
    const secret = `whsec_${key.toString('base64')}`;
    const headers = standardWebhookHeaders(secret, 'msg_1', body, now);
    assert.equal(headers['webhook-id'], 'msg_1');
    assert.equal(headers['webhook-timestamp'], String(Math.floor(now.getTime() / 1000)));
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    const expected = createHmac('sha256', key).update(`msg_1.${headers['webhook-timestamp']}.${body}`).digest('base64');
    assert.equal(headers['webhook-signature'], `v1,${expected}`);
  });

  it('any other secret is its UTF-8 bytes', () => {
    for (const secret of ['plain-shared-secret', 'clé-secrète-ünïcode-🔑']) {
      const headers = standardWebhookHeaders(secret, 'msg_2', body, now);
      assert.doesNotThrow(() => new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(body, headers), secret);
      const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`msg_2.${headers['webhook-timestamp']}.${body}`).digest('base64');
      assert.equal(headers['webhook-signature'], `v1,${expected}`);
    }
    // An ASCII secret verifies with the package's raw string form too.
    const headers = standardWebhookHeaders('plain-shared-secret', 'msg_3', body, now);
    assert.doesNotThrow(() => new Webhook('plain-shared-secret', { format: 'raw' }).verify(body, headers));
    assert.throws(() => new Webhook('plain-shared-secreT', { format: 'raw' }).verify(body, headers), /signature/);
  });
});
