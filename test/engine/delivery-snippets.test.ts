import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { startReceiver } from '../helpers/receiver';
import { webhookCalls } from '../helpers/webhook-calls';
import { joinWorkspace } from '../helpers/workspaces';

/**
 * Each delivery attempt keeps the first 1 KiB at most of the receiver's answer (migration 21), shown with
 * the attempt in GET /api/webhooks/:id/deliveries/:deliveryId to anyone who may read the webhook.
 */
describe('delivery attempts with response snippets', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  const { createWebhook, waitForDelivery } = webhookCalls(() => h);

  before(async () => {
    h = await startEngine(suite, __filename, { WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s,1s', WEBHOOK_TIMEOUT_MS: '2000' });
  });

  it('each attempt shows its status code, error, duration and what the receiver answered: text cut at 1 KiB, binary left out', async () => {
    const owner = await registerUser(h.app);
    const long = `x${'é'.repeat(700)}`;
    const rx = await startReceiver(suite, (_, i) =>
      [
        { status: 503, body: 'upstream busy: try later' },
        { status: 500, body: 'binary-ish', headers: { 'content-type': 'application/octet-stream' } },
        // Labelled text, but bytes that are not UTF-8 (Latin-1): judged from the bytes, not kept.
        { status: 502, body: Buffer.from('caf\xe9 ferm\xe9', 'latin1') },
        // Text holding U+FFFD itself (valid UTF-8): kept, though decoded text could not tell it from a bad byte.
        { status: 503, body: 'glyph \uFFFD missing' },
        { status: 200, body: { accepted: true, note: long } },
      ][i] ?? {},
    );
    const webhook = await createWebhook(owner, { url: `${rx.url}/hook`, events: ['agent.created'] });
    await api(h.app, owner).ok('POST', '/api/agents', { name: 'emits agent.created' });
    const delivery = await waitForDelivery(owner, webhook.id, 'the fifth attempt to succeed', (d) => d.status === 'succeeded');

    // A viewer reads it as the owner does.
    const viewer = await joinWorkspace(h.app, owner, 'viewer');
    const detail = await api(h.app).ok('GET', `/api/webhooks/${webhook.id}/deliveries/${delivery.id}`, undefined, viewer.headers);
    const attempts = detail.attemptsDetail as { attempt: number; statusCode: number; error: string | null; durationMs: number; responseSnippet: string | null }[];
    assert.deepEqual(
      attempts.map((a) => [a.attempt, a.statusCode, a.error, a.responseSnippet === null ? null : a.responseSnippet.slice(0, 40)]),
      [
        [1, 503, 'HTTP 503', 'upstream busy: try later'],
        [2, 500, 'HTTP 500', null],
        [3, 502, 'HTTP 502', null],
        [4, 503, 'HTTP 503', 'glyph \uFFFD missing'],
        [5, 200, null, JSON.stringify({ accepted: true, note: long }).slice(0, 40)],
      ],
    );
    const last = attempts[4]!.responseSnippet!;
    const full = JSON.stringify({ accepted: true, note: long });
    assert.ok(full.startsWith(last), 'a prefix of the body');
    assert.ok(Buffer.byteLength(last) <= 1024 && Buffer.byteLength(last) > 1020, `${Buffer.byteLength(last)} bytes`);
    assert.ok(attempts.every((a) => Number.isInteger(a.durationMs) && a.durationMs >= 0));
  });

  it('an attempt that got no response has no snippet, only its error', async () => {
    const owner = await registerUser(h.app);
    // Holds the answer past WEBHOOK_TIMEOUT_MS every time.
    const rx = await startReceiver(suite, () => ({ body: 'too late', delayMs: 5_000 }));
    const webhook = await createWebhook(owner, { url: `${rx.url}/hook`, events: ['agent.created'] });
    await api(h.app, owner).ok('POST', '/api/agents', { name: 'times out' });
    const delivery = await waitForDelivery(owner, webhook.id, 'the delivery to fail', (d) => d.status === 'failed');
    const detail = await api(h.app, owner).ok('GET', `/api/webhooks/${webhook.id}/deliveries/${delivery.id}`);
    assert.ok(detail.attemptsDetail.length >= 1);
    for (const a of detail.attemptsDetail) {
      assert.equal(a.statusCode, null);
      assert.match(a.error, /timed out/);
      assert.equal(a.responseSnippet, null);
    }
  });
});
