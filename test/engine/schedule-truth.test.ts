import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { workflowIds } from '../../engine/temporal/names';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';

interface ExpectedFire {
  scheduledAt: string;
  localTime: string;
  status: string;
  fireId: string | null;
  firedAt: string | null;
  lagMs: number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Schedule truth on a real dev server (docs/api.md § Triggers): previews are Temporal's own upcoming times,
 * and expected fires say what became of each time while the engine fires, is paused, disabled, stopped, and
 * while a schedule is missing.
 */
describe('schedule truth', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let user: TestUser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) {
    const res = await h.app.inject({ method, url, headers: user.auth, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers };
  }
  const schedule = (id: string) => h.engine.client.schedule.getHandle(workflowIds.triggerSchedule(id));
  async function expectedFires(base: string, from: string, to = new Date().toISOString()): Promise<ExpectedFire[]> {
    const res = await call('GET', `${base}/expected-fires?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as ExpectedFire[];
  }
  /** Statuses of the times scheduled in [from, to), oldest first. */
  const statusesBetween = (fires: ExpectedFire[], from: number, to: number) =>
    fires.filter((f) => Date.parse(f.scheduledAt) >= from && Date.parse(f.scheduledAt) < to).map((f) => f.status);

  before(async () => {
    // The worker's own sweep runs at start only (it starts the watch for missed fires); the test sweeps when it wants.
    h = await startEngine(suite, __filename, { SCHEDULE_SWEEP_MS: '3600000', MISSED_FIRE_GRACE_MS: '1000' });
    user = await registerUser(h.app);
    receiver = await startReceiver(suite);
  });

  it('the preview lists the times Temporal\'s schedule lists as upcoming, DST days in Berlin and New York included', async () => {
    const cases = [
      ['30 2 * 3 0', 'Europe/Berlin'], // Sundays of March at 02:30: the last one is the skipped hour
      ['30 2 * 10 0', 'Europe/Berlin'], // Sundays of October at 02:30: the last one is the repeated hour
      ['30 2 * 3 0', 'America/New_York'], // the second Sunday of March is the skipped hour
      ['30 1 * 11 0', 'America/New_York'], // the first Sunday of November repeats 01:00–02:00
      ['0 * * 3,10,11 0', 'Europe/Berlin'], // every hour of those Sundays
      ['15,45 0-3 * 3,11 0', 'America/New_York'],
      ['0 9 * * 1-5', 'Asia/Kolkata'],
      ['@every 90m', 'America/New_York'],
    ] as const;
    for (const [cronExpression, timezone] of cases) {
      const created = await call('POST', '/api/user-triggers', { type: 'cron', name: `${cronExpression} ${timezone}`, configJson: { cronExpression, timezone } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = (created.body as { id: string }).id;
      const described = await waitFor('its schedule', () => schedule(id).describe().catch(() => undefined), 20_000);
      const upcoming = described.info.nextActionTimes.map((t) => t.toISOString());
      assert.equal(upcoming.length, 10);
      const preview = await call('GET', `/api/user-triggers/${id}/preview?n=10`);
      assert.equal(preview.status, 200);
      assert.deepEqual((preview.body as { at: string }[]).map((p) => p.at), upcoming, `${cronExpression} in ${timezone}`);
      for (const p of preview.body as { at: string; localTime: string }[]) assert.equal(Date.parse(p.localTime), Date.parse(p.at), 'localTime is the same instant');
      // nextFireAt says the same (the API computes it the same way until the schedule reports it).
      assert.equal((await call('GET', `/api/user-triggers/${id}`)).body.nextFireAt, upcoming[0]);
      assert.equal((await call('DELETE', `/api/user-triggers/${id}`)).status, 204);
    }
    // The DST cases really cover those days: Berlin's skipped Sunday is absent, New York's repeated hour fires twice.
    const ny = await call('POST', '/api/user-triggers', { type: 'cron', name: 'ny', configJson: { cronExpression: '30 1 * 11 0', timezone: 'America/New_York' } });
    const times = ((await call('GET', `/api/user-triggers/${ny.body.id}/preview?n=20`)).body as { localTime: string }[]).map((p) => p.localTime);
    assert.ok(times.includes('2027-11-07T01:30:00-04:00') && times.includes('2027-11-07T01:30:00-05:00'), times.join(' '));
    await call('DELETE', `/api/user-triggers/${ny.body.id}`);
  });

  it('expected fires follow what the engine did: fired with lag, paused agent, disabled trigger, and each joined to its fire', async () => {
    const agent = (await call('POST', '/api/agents', { name: 'scheduled agent' })).body as { id: string };
    const created = await call('POST', `/api/agents/${agent.id}/triggers`, {
      type: 'cron', name: 'every 2 s', configJson: { cronExpression: '*/2 * * * * *', overlapPolicy: 'allow_all' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = (created.body as { id: string }).id;
    const base = `/api/triggers/${id}`;
    const start = Date.now();
    const fired = (n: number) => waitFor(`${n} fires`, async () => {
      const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM fires WHERE trigger_id = $1 AND status = 'fired'`, [id]);
      return rows[0].n >= n;
    }, 30_000);
    await fired(2);

    // The agent paused for a while: its fires are skipped.
    assert.equal((await call('PATCH', `/api/agents/${agent.id}`, { status: 'paused' })).status, 200);
    const paused = Date.now();
    await sleep(5_000);
    assert.equal((await call('PATCH', `/api/agents/${agent.id}`, { status: 'active' })).status, 200);
    const resumed = Date.now();
    await fired(4);

    // The trigger disabled for a while: its schedule is paused.
    assert.equal((await call('PATCH', base, { enabled: false })).status, 200);
    const disabled = Date.now();
    await sleep(5_000);
    assert.equal((await call('PATCH', base, { enabled: true })).status, 200);
    const enabled = Date.now();
    const again = await waitFor('fires again', async () => {
      const { rows } = await h.db.query<{ scheduled_at: Date }>(
        `SELECT scheduled_at FROM fires WHERE trigger_id = $1 AND status = 'fired' AND scheduled_at > $2 ORDER BY scheduled_at LIMIT 1`,
        [id, new Date(enabled + 2_000)],
      );
      return rows[0]?.scheduled_at;
    }, 30_000);
    const until = again.getTime() + 1;

    const fires = await expectedFires(base, new Date(start - 4_000).toISOString(), new Date(until).toISOString());
    const statuses = (from: number, to: number) => new Set(statusesBetween(fires, from, to));
    assert.ok(fires.length >= 10, JSON.stringify(fires));
    // Every 2 s, in order, none twice.
    for (let i = 1; i < fires.length; i++) assert.equal(Date.parse(fires[i]!.scheduledAt) - Date.parse(fires[i - 1]!.scheduledAt), 2_000);
    assert.deepEqual(statuses(start - 4_000, start - 2_000), new Set(['before-created']));
    // Before the pause: fired (the range may be short when the first fires came fast).
    assert.ok([...statuses(start + 2_000, paused - 2_000)].every((status) => status === 'fired'));
    assert.ok(fires.some((f) => f.status === 'fired' && Date.parse(f.scheduledAt) < paused), 'fired before the pause');
    assert.deepEqual(statuses(paused + 1_500, resumed - 1_000), new Set(['paused']));
    assert.deepEqual(statuses(disabled + 1_000, enabled - 1_000), new Set(['disabled']));
    assert.deepEqual(statuses(enabled + 2_000, until), new Set(['fired']));

    // A fired time names its fire, with the lag from the time to the fire's record.
    const one = fires.find((f) => f.status === 'fired')!;
    const detail = await call('GET', `${base}/fires/${one.fireId}`);
    assert.equal(detail.status, 200);
    assert.equal(detail.body.scheduledAt, one.scheduledAt);
    assert.equal(detail.body.firedAt, one.firedAt);
    assert.equal(one.lagMs, Date.parse(one.firedAt!) - Date.parse(one.scheduledAt));
    assert.ok(one.lagMs! >= 0);
    const skipped = fires.find((f) => f.status === 'paused')!;
    assert.equal((await call('GET', `${base}/fires/${skipped.fireId}`)).body.status, 'skipped');

    // Paging: 3 at a time, Link rel="next", the same times in the same order.
    const paged: ExpectedFire[] = [];
    let url: string | undefined = `${base}/expected-fires?from=${encodeURIComponent(new Date(start - 4_000).toISOString())}&to=${encodeURIComponent(new Date(until).toISOString())}&limit=3`;
    while (url) {
      const page = await call('GET', url);
      assert.equal(page.status, 200);
      assert.ok((page.body as ExpectedFire[]).length <= 3);
      paged.push(...(page.body as ExpectedFire[]));
      const link = page.headers.link as string | undefined;
      url = link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!).pathname + new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!).search : undefined;
    }
    assert.deepEqual(paged.map((f) => f.scheduledAt), fires.map((f) => f.scheduledAt));
    await call('DELETE', `/api/agents/${agent.id}`);
  });

  it('a worker stopped for 20 s: the times meanwhile are overlap-skipped (policy skip), a fire made meanwhile is recorded late', async () => {
    const created = await call('POST', '/api/user-triggers', { type: 'cron', name: 'every 3 s', configJson: { cronExpression: '*/3 * * * * *' } });
    const id = (created.body as { id: string }).id;
    await waitFor('a fire', async () => (await h.db.query(`SELECT 1 FROM fires WHERE trigger_id = $1`, [id])).rows.length > 0, 30_000);
    await h.stopWorker();
    const stopped = Date.now();
    await sleep(20_000);
    await h.startWorker();
    const restarted = Date.now();
    await waitFor('fires after the restart', async () => {
      const { rows } = await h.db.query(`SELECT 1 FROM fires WHERE trigger_id = $1 AND scheduled_at > $2`, [id, new Date(restarted + 1_000)]);
      return rows.length > 0;
    }, 30_000);
    const fires = await expectedFires(`/api/user-triggers/${id}`, new Date(stopped - 1_000).toISOString(), new Date(restarted).toISOString());
    const during = fires.filter((f) => Date.parse(f.scheduledAt) > stopped + 500 && Date.parse(f.scheduledAt) < restarted - 3_000);
    assert.ok(during.length >= 4, JSON.stringify(fires));
    // Nothing was lost: while no worker could finish the fire workflow that was open when it stopped (or the
    // first one started after), Temporal started no other (overlap policy skip). A fire made meanwhile was
    // recorded late, once a worker was back.
    for (const f of during) {
      if (f.status === 'fired') assert.ok(Date.parse(f.firedAt!) >= restarted - 1_000, `${f.scheduledAt} recorded at ${f.firedAt}`);
      else assert.equal(f.status, 'overlap-skipped', JSON.stringify(f));
    }
    assert.ok(during.filter((f) => f.status === 'overlap-skipped').length >= 4, JSON.stringify(during));
    await call('DELETE', `/api/user-triggers/${id}`);
  });

  it('a schedule missing from Temporal for a while: its times are missed, each emits trigger.missed once, delivered to a subscribed webhook', async () => {
    const webhook = await call('POST', '/api/webhooks', { name: 'alerts', direction: 'outgoing', url: receiver.url, events: ['trigger.missed'] });
    assert.equal(webhook.status, 201);
    const created = await call('POST', '/api/user-triggers', { type: 'cron', name: 'every 2 s', configJson: { cronExpression: '*/2 * * * * *', catchupWindow: '10s' } });
    const id = (created.body as { id: string }).id;
    await waitFor('a fire', async () => (await h.db.query(`SELECT 1 FROM fires WHERE trigger_id = $1`, [id])).rows.length > 0, 30_000);
    await schedule(id).delete(); // behind the API's back
    const deleted = Date.now();
    await sleep(6_000);
    await h.engine.sweep(); // the reconciler finds it missing and re-creates it
    const corrected = Date.now();
    await h.engine.handOff.drain();
    await waitFor('fires again', async () => {
      const { rows } = await h.db.query(`SELECT 1 FROM fires WHERE trigger_id = $1 AND scheduled_at > $2`, [id, new Date(corrected)]);
      return rows.length > 0;
    }, 30_000);

    // The times in the gap are missed (their schedule was gone: nothing could fire them).
    const base = `/api/user-triggers/${id}`;
    const gap = (fires: ExpectedFire[]) => fires.filter((f) => Date.parse(f.scheduledAt) > deleted + 1_000 && Date.parse(f.scheduledAt) < corrected - 1_000);
    const judged = gap(await expectedFires(base, new Date(deleted - 4_000).toISOString()));
    assert.ok(judged.length >= 2, JSON.stringify(judged));
    assert.deepEqual(new Set(judged.map((f) => f.status)), new Set(['missed']));

    // Once their catch-up window (10 s) and the grace (1 s) have passed, a sweep emits trigger.missed for each.
    await sleep(Math.max(0, corrected + 12_000 - Date.now()));
    await h.engine.sweep();
    const events = async () =>
      (await h.db.query<{ data: { triggerId: string; scheduledAt: string } }>(`SELECT data FROM events WHERE type = 'trigger.missed' AND data ->> 'triggerId' = $1`, [id])).rows.map(
        (r) => r.data.scheduledAt,
      );
    const emitted = await events();
    for (const f of judged) assert.ok(emitted.includes(f.scheduledAt), `trigger.missed for ${f.scheduledAt}: ${emitted.join(', ')}`);
    assert.equal(new Set(emitted).size, emitted.length, 'once each');
    for (const at of emitted) {
      const status = (await expectedFires(base, new Date(Date.parse(at) - 100).toISOString(), new Date(Date.parse(at) + 100).toISOString()))[0]!.status;
      assert.equal(status, 'missed', `${at} was emitted as missed`);
    }
    // A second sweep emits nothing again.
    await h.engine.sweep();
    assert.deepEqual((await events()).sort(), [...emitted].sort());
    // Delivered to the webhook subscribed to trigger.missed, with the trigger and the time.
    await waitFor('deliveries of trigger.missed', async () => receiver.requests.length >= emitted.length, 30_000);
    const delivered = receiver.requests.map((r) => JSON.parse(r.body) as { type: string; data: { triggerId: string; scheduledAt: string } });
    assert.ok(delivered.every((d) => d.type === 'trigger.missed' && d.data.triggerId === id));
    assert.deepEqual(new Set(delivered.map((d) => d.data.scheduledAt)), new Set(emitted));
    await call('DELETE', `/api/user-triggers/${id}`);
  });
});
