import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

interface FireDelivery {
  id: string;
  webhookId: string;
  webhookName: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
}
interface TimelineEntry {
  scheduledAt: string;
  status: string;
  fireId: string | null;
  runId: string | null;
  runStatus: string | null;
  deliveries: FireDelivery[];
}

const HOUR = 3_600_000;

/**
 * What followed a trigger's fires (docs/api.md § Triggers, "Timeline"): GET …/timeline (a cron trigger's
 * expected fires with their runs and deliveries), GET …/fires/:fireId/deliveries, and GET /api/schedule-preview
 * (the next times of an expression not yet saved), on a real database with fires, runs, events and
 * deliveries written at known times.
 */
describe('trigger timeline', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let user: TestUser;
  let stranger: TestUser;
  let accountId: string;
  let agentId: string;
  let webhooks: { id: string; name: string }[];

  const newWebhook = async (who: TestUser, name: string) => {
    const created = await api(app, who).ok('POST', '/api/webhooks', { name, url: 'http://127.0.0.1:9/hook', events: ['*'] });
    return { id: created.id as string, name };
  };

  /** An event of the account at `at`, delivered to `to` with the given status. */
  async function event(type: string, data: object, at: Date, to: { id: string }[], status = 'succeeded', account = accountId): Promise<string> {
    const { rows } = await db.query<{ id: string }>(`INSERT INTO events (account_id, type, data, created_at) VALUES ($1, $2, $3, $4) RETURNING id`, [
      account, type, JSON.stringify(data), at,
    ]);
    for (const webhook of to) {
      await db.query(
        `INSERT INTO deliveries (account_id, webhook_id, event_id, status, attempts, last_status_code, created_at) VALUES ($1, $2, $3, $4, 1, $5, $6)`,
        [account, webhook.id, rows[0]!.id, status, status === 'succeeded' ? 200 : 500, at],
      );
    }
    return rows[0]!.id;
  }

  /**
   * A schedule fire of `triggerId` for `scheduledAt`, recorded a second later with its agent.triggered event
   * (written in the same transaction, so at the fire's created_at; delivered to `webhooks`); its run ended
   * 5 s later with `runStatus`, its result event written in the transaction that ended it (so at the run's
   * finished_at), delivered to the first webhook only.
   */
  async function scheduleFire(triggerId: string, scheduledAt: Date, runStatus: 'succeeded' | 'failed' | 'running') {
    const recordedAt = new Date(scheduledAt.getTime() + 1000);
    const finishedAt = runStatus === 'running' ? null : new Date(scheduledAt.getTime() + 6000);
    const run = await db.query<{ id: string }>(
      `INSERT INTO runs (account_id, agent_id, trigger_id, status, started_at, finished_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $5) RETURNING id`,
      [accountId, agentId, triggerId, runStatus, recordedAt, finishedAt],
    );
    const runId = run.rows[0]!.id;
    const fire = await db.query<{ id: string }>(
      `INSERT INTO fires (account_id, trigger_id, fire_key, source, status, run_id, scheduled_at, created_at)
       VALUES ($1, $2, $3, 'schedule', 'fired', $4, $5, $6) RETURNING id`,
      [accountId, triggerId, `schedule-${scheduledAt.toISOString()}`, runId, scheduledAt, recordedAt],
    );
    const fireId = fire.rows[0]!.id;
    await event('agent.triggered', { triggerId, fireId, source: 'schedule', agentId, runId }, recordedAt, webhooks);
    await db.query(`UPDATE runs SET fire_id = $2 WHERE id = $1`, [runId, fireId]);
    if (finishedAt) {
      await event(runStatus === 'succeeded' ? 'agent.completed' : 'agent.failed', { agentId, runId }, finishedAt, [webhooks[0]!], runStatus === 'succeeded' ? 'succeeded' : 'failed');
    }
    return { fireId, runId };
  }

  /** An hourly cron trigger of the agent, as if created at `since`. */
  async function hourlyTrigger(since: Date) {
    const trigger = await api(app, user).ok('POST', `/api/agents/${agentId}/triggers`, { type: 'cron', name: 'hourly', configJson: { cronExpression: '0 * * * *' } });
    await db.query(`UPDATE trigger_schedule_history SET valid_from = $2 WHERE trigger_id = $1`, [trigger.id, since]);
    await db.query(`UPDATE triggers SET created_at = $2 WHERE id = $1`, [trigger.id, since]);
    return trigger.id as string;
  }

  before(async () => {
    ({ app, db } = await startTestApp(suite));
    user = await registerUser(app);
    stranger = await registerUser(app);
    accountId = (await api(app, user).ok('GET', '/api/account')).id;
    agentId = (await api(app, user).ok('POST', '/api/agents', { name: 'Timeline agent', status: 'active' })).id;
    webhooks = [await newWebhook(user, 'CRM'), await newWebhook(user, 'Billing')];
  });

  it('a cron trigger\'s timeline: each expected time, its fire, its run\'s status now, and the deliveries of the fire\'s event and of the run\'s result', async () => {
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    const triggerId = await hourlyTrigger(new Date(hour - 2.5 * HOUR));
    const [h3, h2, h1] = [new Date(hour - 2 * HOUR), new Date(hour - HOUR), new Date(hour)];
    const first = await scheduleFire(triggerId, h3, 'succeeded');
    const second = await scheduleFire(triggerId, h2, 'failed');
    const third = await scheduleFire(triggerId, h1, 'running');
    // Noise the timeline must not show: another event of the account at a run's finishing time, an
    // agent.completed of another run then, an agent.triggered of another fire at a fire's time, and
    // another account's delivery of an event at that time.
    await event('agent.updated', { agentId }, new Date(h3.getTime() + 6000), webhooks);
    await event('agent.triggered', { triggerId, fireId: third.fireId, agentId }, new Date(h3.getTime() + 1000), webhooks);
    await event('agent.completed', { agentId, runId: third.runId.replace(/^./, '0') }, new Date(h3.getTime() + 6000), webhooks);
    const strangerAccount = (await api(app, stranger).ok('GET', '/api/account')).id;
    const strangerHook = await newWebhook(stranger, 'theirs');
    await event('agent.completed', { runId: first.runId }, new Date(h3.getTime() + 6000), [strangerHook], 'succeeded', strangerAccount);

    const from = new Date(hour - 3 * HOUR).toISOString();
    const res = await api(app, user).get(`/api/triggers/${triggerId}/timeline?from=${from}`);
    assert.equal(res.statusCode, 200, res.body);
    const timeline = res.json<TimelineEntry[]>();
    // Three hours back: the first time is before the trigger existed; then the three fires, oldest first.
    assert.deepEqual(timeline.map((e) => [e.scheduledAt, e.status, e.runStatus]), [
      [new Date(hour - 3 * HOUR).toISOString(), 'before-created', null],
      [h3.toISOString(), 'fired', 'succeeded'],
      [h2.toISOString(), 'fired', 'failed'],
      [h1.toISOString(), 'fired', 'running'],
    ]);
    assert.deepEqual(timeline.slice(1).map((e) => [e.fireId, e.runId]), [first, second, third].map((f) => [f.fireId, f.runId]));
    const shown = (e: TimelineEntry) => e.deliveries.map((d) => [d.webhookName, d.eventType, d.status]);
    assert.deepEqual(shown(timeline[1]!), [['Billing', 'agent.triggered', 'succeeded'], ['CRM', 'agent.triggered', 'succeeded'], ['CRM', 'agent.completed', 'succeeded']]);
    assert.deepEqual(shown(timeline[2]!), [['Billing', 'agent.triggered', 'succeeded'], ['CRM', 'agent.triggered', 'succeeded'], ['CRM', 'agent.failed', 'failed']]);
    assert.deepEqual(shown(timeline[3]!), [['Billing', 'agent.triggered', 'succeeded'], ['CRM', 'agent.triggered', 'succeeded']], 'a running run has no result yet');
    assert.deepEqual(timeline[0]!.deliveries, []);
    assert.equal(timeline[1]!.deliveries[2]!.webhookId, webhooks[0]!.id);
    assert.equal(timeline[2]!.deliveries[2]!.lastStatusCode, 500);

    // Paged as expected-fires is: two at a time, the next page through Link.
    const page = await api(app, user).get(`/api/triggers/${triggerId}/timeline?from=${from}&limit=2`);
    assert.deepEqual(page.json<TimelineEntry[]>().map((e) => e.status), ['before-created', 'fired']);
    const next = /<([^>]+)>; rel="next"/.exec(String(page.headers.link))![1]!;
    assert.deepEqual((await api(app, user).ok<TimelineEntry[]>('GET', new URL(next).pathname + new URL(next).search)).map((e) => e.runStatus), ['failed', 'running']);
  });

  it('one fire\'s deliveries, under the scope of its trigger only', async () => {
    const triggerId = await hourlyTrigger(new Date(Date.now() - 2 * HOUR));
    const fire = await scheduleFire(triggerId, new Date(Math.floor(Date.now() / HOUR) * HOUR), 'succeeded');
    const res = await api(app, user).get(`/api/triggers/${triggerId}/fires/${fire.fireId}/deliveries`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json<FireDelivery[]>().map((d) => [d.webhookName, d.eventType]), [['Billing', 'agent.triggered'], ['CRM', 'agent.triggered'], ['CRM', 'agent.completed']]);

    const otherTrigger = await hourlyTrigger(new Date(Date.now() - HOUR));
    const refusals = [
      [user, `/api/triggers/${otherTrigger}/fires/${fire.fireId}/deliveries`, 'Fire not found'],
      [user, `/api/user-triggers/${triggerId}/fires/${fire.fireId}/deliveries`, 'Trigger not found'],
      [stranger, `/api/triggers/${triggerId}/fires/${fire.fireId}/deliveries`, 'Trigger not found'],
      [stranger, `/api/triggers/${triggerId}/timeline`, 'Trigger not found'],
      [user, `/api/triggers/${triggerId}/fires/not-a-uuid/deliveries`, null],
    ] as const;
    for (const [who, url, message] of refusals) {
      const refused = await api(app, who).get(url);
      assert.equal(refused.statusCode, 404, `${url}: ${refused.body}`);
      if (message) assert.deepEqual(refused.json(), { message });
    }
  });

  it('a fire recorded by the API itself (Fire now): its own trigger.fired, delivered to each webhook', async () => {
    const trigger = await api(app, user).ok('POST', '/api/user-triggers', { type: 'webhook', name: 'manual' });
    const { fireId } = await api(app, user).ok('POST', `/api/user-triggers/${trigger.id}/fire`, { payload: { n: 1 } });
    await api(app, user).ok('POST', `/api/user-triggers/${trigger.id}/fire`, {}); // another fire: not this one's
    const res = await api(app, user).get(`/api/user-triggers/${trigger.id}/fires/${fireId}/deliveries`);
    assert.equal(res.statusCode, 200, res.body);
    const deliveries = res.json<(FireDelivery & { eventId: string })[]>();
    assert.deepEqual(deliveries.map((d) => [d.webhookName, d.eventType]), [['Billing', 'trigger.fired'], ['CRM', 'trigger.fired']]);
    const { rows } = await db.query(`SELECT data->>'fireId' AS fire_id FROM events WHERE id = $1`, [deliveries[0]!.eventId]);
    assert.equal(rows[0].fire_id, fireId);
  });

  it('a trigger that fires on no schedule has no timeline (409); bad queries are 400s naming the field', async () => {
    const hook = await api(app, user).ok('POST', '/api/user-triggers', { type: 'webhook', name: 'hook' });
    const res = await api(app, user).get(`/api/user-triggers/${hook.id}/timeline`);
    assert.equal(res.statusCode, 409, res.body);
    assert.deepEqual(Object.keys(res.json()), ['message']);
    const cron = await hourlyTrigger(new Date(Date.now() - HOUR));
    for (const [query, field] of [['limit=0', 'limit'], ['from=yesterday', 'from'], ['cursor=nope', 'cursor']]) {
      const bad = await api(app, user).get(`/api/triggers/${cron}/timeline?${query}`);
      assert.equal(bad.statusCode, 400, bad.body);
      assert.match(bad.json().message, new RegExp(`^querystring\\.${field}: `));
    }
  });

  it('a timeline is bounded: at most 200 entries a page, at most 20 deliveries an entry with the count of the rest (docs/api.md § Triggers)', async () => {
    // A minutely trigger for 5 h: 300 expected times, more than a page.
    const trigger = await api(app, user).ok('POST', `/api/agents/${agentId}/triggers`, { type: 'cron', name: 'minutely', configJson: { cronExpression: '* * * * *' } });
    const since = new Date(Date.now() - 5 * HOUR);
    await db.query(`UPDATE trigger_schedule_history SET valid_from = $2 WHERE trigger_id = $1`, [trigger.id, since]);
    await db.query(`UPDATE triggers SET created_at = $2 WHERE id = $1`, [trigger.id, since]);
    // One fire delivered to 25 webhooks (its agent.triggered) and its run's result to the first: 26 deliveries.
    const many = [...webhooks];
    for (let i = many.length; i < 25; i++) many.push(await newWebhook(user, `Hook ${String(i).padStart(2, '0')}`));
    // Early in the window: a page runs oldest first.
    const minute = Math.floor(since.getTime() / 60_000) * 60_000 + 30 * 60_000;
    const saved = webhooks;
    webhooks = many;
    const { fireId } = await scheduleFire(trigger.id, new Date(minute), 'succeeded');
    webhooks = saved;

    const res = await api(app, user).get(`/api/triggers/${trigger.id}/timeline?from=${encodeURIComponent(new Date(Date.now() - 5 * HOUR + 60_000).toISOString())}`);
    assert.equal(res.statusCode, 200, res.body);
    const entries = res.json<(TimelineEntry & { moreDeliveries: number })[]>();
    assert.equal(entries.length, 200, 'a page holds at most 200 entries');
    assert.match(String(res.headers.link), /rel="next"/);
    const fired = entries.find((e) => e.fireId === fireId);
    assert.ok(fired, 'the fire is on the first page');
    assert.equal(fired.deliveries.length, 20);
    assert.equal(fired.moreDeliveries, 6);
    assert.deepEqual(
      (await api(app, user).ok<FireDelivery[]>('GET', `/api/triggers/${trigger.id}/fires/${fireId}/deliveries`)).slice(0, 20).map((d) => d.id),
      fired.deliveries.map((d) => d.id),
      'the first 20 of the fire\'s deliveries, in their order',
    );
    assert.equal((await api(app, user).ok<FireDelivery[]>('GET', `/api/triggers/${trigger.id}/fires/${fireId}/deliveries`)).length, 26);
    for (const e of entries.filter((x) => x.fireId !== fireId)) assert.equal(e.moreDeliveries, 0);

    const tooMany = await api(app, user).get(`/api/triggers/${trigger.id}/timeline?limit=201`);
    assert.equal(tooMany.statusCode, 400, tooMany.body);
    assert.match(tooMany.json().message, /^querystring\.limit: /);
  });

  it('the next times of an expression not yet saved, in its zone; bad ones are 400s naming the field', async () => {
    const res = await api(app, user).get(`/api/schedule-preview?cronExpression=${encodeURIComponent('30 9 * * 1-5')}&timezone=Europe/Paris&n=5`);
    assert.equal(res.statusCode, 200, res.body);
    const times = res.json<{ at: string; localTime: string }[]>();
    assert.equal(times.length, 5);
    for (const t of times) {
      assert.match(t.localTime, /T09:30:00\+0[12]:00$/);
      assert.ok(Date.parse(t.at) > Date.now());
      assert.ok([1, 2, 3, 4, 5].includes(new Date(t.at).getUTCDay()));
    }
    assert.deepEqual(
      (await api(app, user).ok<{ at: string }[]>('GET', `/api/schedule-preview?cronExpression=${encodeURIComponent('@every 1s')}&n=3`)).length,
      3,
    );
    for (const [query, field] of [
      ['cronExpression=banana', 'cronExpression'],
      ['cronExpression=*+*+*+*+*&timezone=Mars/Olympus', 'timezone'],
      ['timezone=UTC', 'cronExpression'],
      ['cronExpression=*+*+*+*+*&n=101', 'n'],
    ]) {
      const bad = await api(app, user).get(`/api/schedule-preview?${query}`);
      assert.equal(bad.statusCode, 400, `${query}: ${bad.body}`);
      assert.deepEqual(Object.keys(bad.json()), ['message']);
      assert.match(bad.json().message, new RegExp(`^querystring\\.${field}: `), query);
    }
    assert.equal((await api(app, null).get('/api/schedule-preview?cronExpression=*+*+*+*+*')).statusCode, 401);
  });
});
