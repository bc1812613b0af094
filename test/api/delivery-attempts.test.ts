import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { api, type ApiResponse } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { waitFor } from '../helpers/processes';
import { joinWorkspace } from '../helpers/workspaces';

interface Attempt {
  generation: number;
  attempt: number;
  responseSnippet: string | null;
}

const MAX_ATTEMPTS = 300;
/** A delivery retried this often gathers more attempts than the detail may hold (a day of retries is ~86k). */
const GATHERED = 250;

/**
 * Nothing about one delivery grows without a bound in one response (docs/api.md § Webhooks, "Attempts"): its
 * detail holds its last 20 attempts, GET …/attempts pages them all, and DELIVERY_MAX_ATTEMPTS ends manual
 * retries (409 naming it) and recoveries of it. No worker runs: the attempts a day of retries would leave are
 * written as the engine writes them.
 */
describe('a delivery\'s attempts are bounded', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let owner: TestUser;
  /** A viewer of the owner's account: as the issue says, a viewer can read a delivery. */
  let viewer: TestUser & { get: (url: string) => Promise<ApiResponse> };
  let webhookId: string;
  let deliveryId: string;

  before(async () => {
    ({ app, db } = await startTestApp(suite, { DELIVERY_MAX_ATTEMPTS: String(MAX_ATTEMPTS), DELIVERY_RETRIES_PER_MINUTE: '100000' }));
    owner = await registerUser(app);
    webhookId = (await api(app, owner).ok('POST', '/api/webhooks', { name: 'flaky', url: 'http://127.0.0.1:9/hook', events: ['*'] })).id;
    const { eventId } = await api(app, owner).ok('POST', `/api/webhooks/${webhookId}/test`);
    deliveryId = (await db.query<{ id: string }>(`SELECT id FROM deliveries WHERE event_id = $1`, [eventId])).rows[0]!.id;
    // The API makes a held delivery's first attempt itself: let it be recorded (and its row settle) before
    // the attempts below take its place.
    await waitFor('the first attempt', async () => (await db.query(`SELECT 1 FROM deliveries WHERE id = $1 AND attempts >= 1`, [deliveryId])).rowCount === 1, 15_000);
    await db.query(`DELETE FROM delivery_attempts WHERE delivery_id = $1`, [deliveryId]);
    // One scheduled attempt, then a retry generation each, with a 1 KiB snippet: as manual retries leave them.
    await db.query(
      `INSERT INTO delivery_attempts (delivery_id, generation, attempt, status_code, error, duration_ms, response_snippet)
       SELECT $1, g, 1, 500, 'HTTP 500', 12, repeat('x', 1024) FROM generate_series(0, $2 - 1) AS g`,
      [deliveryId, GATHERED],
    );
    await db.query(`UPDATE deliveries SET generation = $2 - 1, attempts = $2, status = 'failed', next_attempt_at = NULL WHERE id = $1`, [deliveryId, GATHERED]);
    const member = await joinWorkspace(app, owner, 'viewer');
    viewer = { ...member.user, get: (url: string) => api(app, member.user).get(url, member.headers) };
  });

  it('the detail holds the last 20 attempts, oldest first, and counts them all', async () => {
    const res = await viewer.get(`/api/webhooks/${webhookId}/deliveries/${deliveryId}`);
    assert.equal(res.statusCode, 200, res.body);
    const detail = res.json<{ attempts: number; attemptsDetail: Attempt[] }>();
    assert.equal(detail.attempts, GATHERED);
    assert.equal(detail.attemptsDetail.length, 20);
    assert.deepEqual(
      detail.attemptsDetail.map((a) => a.generation),
      Array.from({ length: 20 }, (_, i) => GATHERED - 20 + i),
    );
  });

  it('GET …/attempts pages every attempt, oldest first, following Link', async () => {
    const seen: Attempt[] = [];
    let url: string | null = `/api/webhooks/${webhookId}/deliveries/${deliveryId}/attempts?limit=100`;
    let pages = 0;
    while (url) {
      const res = await viewer.get(url);
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json<Attempt[]>();
      assert.ok(page.length <= 100);
      seen.push(...page);
      pages++;
      const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''));
      url = next ? new URL(next[1]!).pathname + new URL(next[1]!).search : null;
    }
    assert.equal(pages, 3);
    assert.deepEqual(seen.map((a) => a.generation), Array.from({ length: GATHERED }, (_, i) => i));
    assert.equal(seen[GATHERED - 1]!.responseSnippet?.length, 1024);

    const bad = await viewer.get(`/api/webhooks/${webhookId}/deliveries/${deliveryId}/attempts?cursor=nope`);
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /^querystring\.cursor: /);
    const stranger = await registerUser(app);
    assert.equal((await api(app, stranger).get(`/api/webhooks/${webhookId}/deliveries/${deliveryId}/attempts`)).statusCode, 404);
  });

  it(`a delivery gets at most DELIVERY_MAX_ATTEMPTS attempts: a retry at the limit is 409 naming it, nothing written; a recovery leaves it out`, async () => {
    const url = `/api/webhooks/${webhookId}/deliveries/${deliveryId}/retry`;
    assert.equal((await api(app, owner).post(url)).statusCode, 202, 'under the limit');
    await db.query(`UPDATE deliveries SET attempts = $2, status = 'failed', next_attempt_at = NULL WHERE id = $1`, [deliveryId, MAX_ATTEMPTS]);
    const { generation } = (await db.query<{ generation: number }>(`SELECT generation FROM deliveries WHERE id = $1`, [deliveryId])).rows[0]!;
    const refused = await api(app, owner).post(url);
    assert.equal(refused.statusCode, 409, refused.body);
    assert.deepEqual(Object.keys(refused.json()), ['message']);
    assert.match(refused.json().message, new RegExp(`DELIVERY_MAX_ATTEMPTS = ${MAX_ATTEMPTS}`));
    assert.equal((await db.query<{ generation: number }>(`SELECT generation FROM deliveries WHERE id = $1`, [deliveryId])).rows[0]!.generation, generation);

    await db.query(`UPDATE deliveries SET finished_at = now() - interval '1 minute' WHERE id = $1`, [deliveryId]);
    const recovery = await api(app, owner).ok('POST', `/api/webhooks/${webhookId}/recover`, { since: new Date(Date.now() - 3_600_000).toISOString() });
    assert.equal(recovery.total, 0, 'a delivery at the limit is not recovered');
  });
});
