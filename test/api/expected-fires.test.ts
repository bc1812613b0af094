import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { Db } from '../../db/pool';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

interface ExpectedFire {
  scheduledAt: string;
  localTime: string;
  status: string;
  fireId: string | null;
  lagMs: number | null;
}

/**
 * GET …/expected-fires and …/preview (docs/api.md § Triggers) through the API on a real database: the 2026 DST
 * days of Europe/Berlin and America/New_York judged from a trigger's recorded history, and bad input.
 */
describe('expected fires and previews', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let user: TestUser;

  async function call(method: 'GET' | 'POST', url: string, payload?: object, who: TestUser = user) {
    const res = await app.inject({ method, url, headers: who.auth, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.body ? res.json() : undefined };
  }
  /** A cron trigger as if created at `since`: its history and creation moved back. */
  async function triggerSince(cronExpression: string, timezone: string, since: string): Promise<{ id: string; accountId: string }> {
    const res = await call('POST', '/api/user-triggers', { type: 'cron', name: `${cronExpression} ${timezone}`, configJson: { cronExpression, timezone } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const trigger = res.body as { id: string; accountId: string };
    await db.query(`UPDATE trigger_schedule_history SET valid_from = $2 WHERE trigger_id = $1`, [trigger.id, since]);
    await db.query(`UPDATE triggers SET created_at = $2 WHERE id = $1`, [trigger.id, since]);
    return trigger;
  }
  const expected = async (id: string, from: string, to: string) => {
    const res = await call('GET', `/api/user-triggers/${id}/expected-fires?from=${from}&to=${to}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as ExpectedFire[];
  };

  before(async () => {
    // Years of history, so that the DST days of 2026 stay judgeable whenever this runs.
    ({ app, db } = await startTestApp(suite, { RETENTION_DAYS: '36500' }));
    user = await registerUser(app);
  });

  it('Europe/Berlin: the skipped hour (2026-03-29) is not expected, the repeated one (2026-10-25) once, each joined to its fire', async () => {
    const trigger = await triggerSince('30 2 * * *', 'Europe/Berlin', '2026-03-01T00:00:00Z');
    // Fires recorded for two of the times, 2 s late.
    for (const at of ['2026-03-28T01:30:00Z', '2026-10-25T01:30:00Z']) {
      await db.query(
        `INSERT INTO fires (account_id, trigger_id, fire_key, source, status, scheduled_at, created_at)
         VALUES ($1, $2, $3, 'schedule', 'fired', $4, $4::timestamptz + interval '2 seconds')`,
        [trigger.accountId, trigger.id, `schedule-${at.replace('.000', '')}`, at],
      );
    }
    // No 2026-03-29 (02:30 did not exist). A time without a fire before one the schedule made more than the
    // catch-up window (1 h) later: catchup-skipped; after the last fire: missed.
    const spring = await expected(trigger.id, '2026-03-28T00:00:00Z', '2026-03-31T00:00:00Z');
    assert.deepEqual(spring.map((f) => [f.localTime, f.status, f.lagMs]), [
      ['2026-03-28T02:30:00+01:00', 'fired', 2000],
      ['2026-03-30T02:30:00+02:00', 'catchup-skipped', null],
    ]);
    assert.ok(spring[0]!.fireId);
    const autumn = await expected(trigger.id, '2026-10-24T00:00:00Z', '2026-10-27T00:00:00Z');
    assert.deepEqual(autumn.map((f) => [f.scheduledAt, f.localTime, f.status]), [
      ['2026-10-24T00:30:00.000Z', '2026-10-24T02:30:00+02:00', 'catchup-skipped'],
      ['2026-10-25T01:30:00.000Z', '2026-10-25T02:30:00+01:00', 'fired'],
      ['2026-10-26T01:30:00.000Z', '2026-10-26T02:30:00+01:00', 'missed'],
    ]);
  });

  it('America/New_York: the skipped hour (2026-03-08) is not expected, the repeated one (2026-11-01) twice', async () => {
    const skipped = await triggerSince('30 2 * * *', 'America/New_York', '2026-03-01T00:00:00Z');
    assert.deepEqual((await expected(skipped.id, '2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z')).map((f) => f.localTime), [
      '2026-03-07T02:30:00-05:00',
      '2026-03-09T02:30:00-04:00',
    ]);
    const repeated = await triggerSince('30 1 * * *', 'America/New_York', '2026-10-01T00:00:00Z');
    assert.deepEqual((await expected(repeated.id, '2026-10-31T12:00:00Z', '2026-11-02T12:00:00Z')).map((f) => [f.scheduledAt, f.localTime]), [
      ['2026-11-01T05:30:00.000Z', '2026-11-01T01:30:00-04:00'],
      ['2026-11-01T06:30:00.000Z', '2026-11-01T01:30:00-05:00'],
      ['2026-11-02T06:30:00.000Z', '2026-11-02T01:30:00-05:00'],
    ]);
  });

  it('the preview lists the next n times in the trigger\'s zone', async () => {
    const trigger = await triggerSince('0 9 * * 1-5', 'Europe/Berlin', new Date().toISOString());
    const res = await call('GET', `/api/user-triggers/${trigger.id}/preview?n=7`);
    assert.equal(res.status, 200);
    const times = res.body as { at: string; localTime: string }[];
    assert.equal(times.length, 7);
    for (const t of times) {
      assert.match(t.localTime, /T09:00:00\+0[12]:00$/);
      assert.equal(Date.parse(t.localTime), Date.parse(t.at));
      assert.ok(![0, 6].includes(new Date(Date.parse(t.at)).getUTCDay()), 'a weekday');
    }
    assert.ok(Date.parse(times[0]!.at) > Date.now());
    assert.equal((await call('GET', `/api/user-triggers/${trigger.id}/preview`)).body.length, 10);
  });

  it('answers 400 naming the problem, 404 for unknown or other accounts\' triggers or the other scope, 409 for a trigger without a schedule', async (t) => {
    const trigger = await triggerSince('*/5 * * * *', 'UTC', new Date(Date.now() - 3_600_000).toISOString());
    const base = `/api/user-triggers/${trigger.id}`;
    const bad: [string, RegExp][] = [
      [`${base}/expected-fires?from=yesterday`, /^querystring\.from: /],
      [`${base}/expected-fires?to=2026-13-01T00:00:00Z`, /^querystring\.to: /],
      [`${base}/expected-fires?from=${new Date().toISOString()}&to=${new Date(Date.now() - 60_000).toISOString()}`, /^querystring\.from: must be before to/],
      [`${base}/expected-fires?limit=1001`, /^querystring\.limit: /],
      [`${base}/expected-fires?limit=0`, /^querystring\.limit: /],
      [`${base}/expected-fires?cursor=not-a-cursor`, /^querystring\.cursor: is not a valid cursor/],
      [`${base}/expected-fires?cursor=${Buffer.from('[1]').toString('base64url')}`, /^querystring\.cursor: is not a valid cursor/],
      [`${base}/preview?n=0`, /^querystring\.n: /],
      [`${base}/preview?n=101`, /^querystring\.n: /],
      [`${base}/preview?n=ten`, /^querystring\.n: /],
    ];
    for (const [url, message] of bad) {
      const res = await call('GET', url);
      assert.equal(res.status, 400, url);
      assert.match(res.body.message, message, url);
    }
    const { app: short } = await startTestApp(t, { RETENTION_DAYS: '7' });
    {
      const other = await registerUser(short);
      const created = await short.inject({ method: 'POST', url: '/api/user-triggers', headers: other.auth, payload: { type: 'cron', name: 'c', configJson: { cronExpression: '@hourly' } } });
      const res = await short.inject({
        method: 'GET', url: `/api/user-triggers/${created.json().id}/expected-fires?from=${new Date(Date.now() - 8 * 86_400_000).toISOString()}`, headers: other.auth,
      });
      assert.equal(res.statusCode, 400);
      assert.match(res.json().message, /^querystring\.from: must be within the last 7 days \(RETENTION_DAYS\)/);
    }

    const stranger = await registerUser(app);
    for (const suffix of ['expected-fires', 'preview']) {
      assert.equal((await call('GET', `/api/user-triggers/${randomUUID()}/${suffix}`)).status, 404);
      assert.equal((await call('GET', `/api/user-triggers/not-an-id/${suffix}`)).status, 404);
      assert.equal((await call('GET', `${base}/${suffix}`, undefined, stranger)).status, 404);
      assert.equal((await call('GET', `/api/triggers/${trigger.id}/${suffix}`)).status, 404, 'a user trigger is unknown to the agent-trigger routes');
    }
    const hook = await call('POST', '/api/user-triggers', { type: 'webhook', name: 'hook', configJson: {} });
    for (const suffix of ['expected-fires', 'preview']) {
      const res = await call('GET', `/api/user-triggers/${hook.body.id}/${suffix}`);
      assert.equal(res.status, 409);
      assert.match(res.body.message, /webhook trigger/);
    }
  });

  it('a page holds at most `limit` times; the cursor continues without repeating or losing one', async () => {
    const trigger = await triggerSince('* * * * *', 'UTC', new Date(Date.now() - 2 * 3_600_000).toISOString());
    const from = new Date(Date.now() - 3_600_000);
    from.setUTCSeconds(0, 0);
    const to = new Date(from.getTime() + 25 * 60_000);
    const all: string[] = [];
    let url: string | undefined = `/api/user-triggers/${trigger.id}/expected-fires?from=${from.toISOString()}&to=${to.toISOString()}&limit=10`;
    let pages = 0;
    while (url) {
      const res: LightMyRequestResponse = await app.inject({ method: 'GET', url, headers: user.auth });
      assert.equal(res.statusCode, 200);
      const page = res.json<ExpectedFire[]>();
      assert.ok(page.length <= 10);
      all.push(...page.map((f) => f.scheduledAt));
      pages++;
      const link = res.headers.link as string | undefined;
      url = link ? ((u) => u.pathname + u.search)(new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!)) : undefined;
    }
    assert.equal(pages, 3);
    assert.equal(all.length, 25);
    assert.equal(new Set(all).size, 25);
    assert.equal(all[0], from.toISOString());
  });
});
