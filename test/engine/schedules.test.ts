import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { scheduleOptions } from '../../engine/fires/schedules';
import { workflowIds } from '../../engine/temporal/names';
import { api } from '../helpers/api';
import { registerUser, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';

/** Cron/schedule triggers ↔ Temporal Schedules `trigger:<id>` (docs/architecture.md § When a trigger is written (schedules)), on a dev server. */
describe('schedules of cron triggers', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let user: TestUser;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const schedule = (id: string) => h.engine.client.schedule.getHandle(workflowIds.triggerSchedule(id));
  const describeSchedule = (id: string) => schedule(id).describe();

  const createUserTrigger = async (configJson: object, extra: object = {}) => {
    const res = await api(h.app, user).post('/api/user-triggers', { type: 'cron', name: 'every two seconds', configJson, ...extra });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string; nextFireAt: string };
  };
  const fireCount = async (id: string) => (await api(h.app, user).get(`/api/user-triggers/${id}`)).json().fireCount as number;

  before(async () => {
    h = await startEngine(suite, __filename);
    user = await registerUser(h.app);
  });

  it('a 6-field (seconds-first) every-2-seconds cron trigger fires and counts', async () => {
    const trigger = await createUserTrigger({ cronExpression: '*/2 * * * * *' });
    const counted = await waitFor('two fires counted', async () => {
      const body = (await api(h.app, user).get(`/api/user-triggers/${trigger.id}`)).json();
      return body.fireCount >= 2 && body;
    }, 20_000);
    assert.ok(counted.lastFired, 'lastFired is set');

    // The schedule runs Temporal's 7-field form of the expression, not the user's text.
    const description = await describeSchedule(trigger.id);
    assert.deepEqual(description.spec.calendars?.[0]?.second, [{ start: 0, end: 59, step: 2 }]);
    assert.equal(description.state.paused, false);
    assert.equal(description.action.type, 'startWorkflow');

    // One fire row per schedule time, each from its own workflow `fire:<id>:schedule-<time>`.
    const { rows } = await h.db.query(
      `SELECT fire_key, source, status, scheduled_at FROM fires WHERE trigger_id = $1 ORDER BY scheduled_at`,
      [trigger.id],
    );
    assert.ok(rows.length >= 2);
    for (const row of rows) {
      assert.match(row.fire_key, /^schedule-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
      assert.equal(row.source, 'schedule');
      assert.equal(row.status, 'fired');
      assert.equal(row.scheduled_at.getUTCSeconds() % 2, 0, 'fires on even seconds');
    }
    assert.equal(counted.fireCount <= rows.length, true, 'never counted more than recorded');

    // Every fire emitted trigger.fired (not linked to an agent).
    const events = await h.db.query(`SELECT count(*)::int AS n FROM events WHERE type = 'trigger.fired' AND data ->> 'triggerId' = $1`, [trigger.id]);
    assert.ok(events.rows[0].n >= 2);

    // nextFireAt, computed from the expression: a future even second.
    const next = new Date((await api(h.app, user).get(`/api/user-triggers/${trigger.id}`)).json().nextFireAt);
    assert.equal(next.getUTCSeconds() % 2, 0);

    // Operators find the trigger's fires by search attribute.
    const listed = await waitFor('fires visible by TriggerId', async () => {
      const ids: string[] = [];
      for await (const wf of h.engine.client.workflow.list({ query: `TriggerId = '${trigger.id}' AND WorkflowType = 'fireTriggerWorkflow'` })) ids.push(wf.workflowId);
      return ids.length >= 2 && ids;
    }, 20_000);
    assert.ok(listed.every((id) => id.startsWith(`fire:${trigger.id}:schedule-`)));
    await api(h.app, user).delete(`/api/user-triggers/${trigger.id}`);
  });

  it('disabling pauses the schedule (no more fires); enabling resumes it', async () => {
    const trigger = await createUserTrigger({ cronExpression: '*/2 * * * * *' });
    await waitFor('a first fire', async () => (await fireCount(trigger.id)) >= 1, 20_000);
    assert.equal((await api(h.app, user).patch(`/api/user-triggers/${trigger.id}`, { enabled: false })).statusCode, 200);
    await waitFor('schedule paused', async () => (await describeSchedule(trigger.id)).state.paused, 10_000);
    assert.equal((await api(h.app, user).get(`/api/user-triggers/${trigger.id}`)).json().nextFireAt, null);
    await sleep(1_000); // a fire already started when the pause landed may still record
    const paused = await fireCount(trigger.id);
    await sleep(4_500); // two schedule periods and more
    assert.equal(await fireCount(trigger.id), paused, 'no fire while disabled');

    assert.equal((await api(h.app, user).patch(`/api/user-triggers/${trigger.id}`, { enabled: true })).statusCode, 200);
    await waitFor('schedule unpaused', async () => !(await describeSchedule(trigger.id)).state.paused, 10_000);
    await waitFor('fires again', async () => (await fireCount(trigger.id)) > paused, 20_000);
    await api(h.app, user).delete(`/api/user-triggers/${trigger.id}`);
  });

  it('an update rewrites the schedule: expression, time zone, overlap policy and catch-up window', async () => {
    const trigger = await createUserTrigger({ cronExpression: '0 9 * * 1-5', timezone: 'Europe/Paris' });
    const before = await waitFor('schedule created', () => describeSchedule(trigger.id).catch(() => undefined), 10_000);
    assert.equal(before.spec.timezone, 'Europe/Paris');
    assert.equal(before.policies.overlap, ScheduleOverlapPolicy.SKIP);
    assert.equal(before.policies.catchupWindow, 3_600_000);

    const res = await api(h.app, user).patch(`/api/user-triggers/${trigger.id}`, {
      configJson: { cronExpression: '@every 90s', timezone: 'America/New_York', overlapPolicy: 'buffer_all', catchupWindow: '10m' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const after = await waitFor('schedule rewritten', async () => {
      const d = await describeSchedule(trigger.id);
      return d.spec.intervals?.length ? d : undefined;
    }, 10_000);
    assert.equal(after.spec.intervals![0]!.every, 90_000);
    assert.equal(after.spec.timezone, 'America/New_York');
    assert.equal(after.policies.overlap, ScheduleOverlapPolicy.BUFFER_ALL);
    assert.equal(after.policies.catchupWindow, 600_000);
    // The API's nextFireAt, computed from the expression, is Temporal's next action time.
    await waitFor('nextFireAt as the schedule says', async () => {
      const shown = (await api(h.app, user).get(`/api/user-triggers/${trigger.id}`)).json().nextFireAt;
      const next = (await describeSchedule(trigger.id)).info.nextActionTimes[0];
      return next && shown === next.toISOString();
    }, 10_000);
    await api(h.app, user).delete(`/api/user-triggers/${trigger.id}`);
  });

  it('delete removes the schedule; so do a type change and deleting the agent of an agent trigger', async () => {
    const gone = (id: string) =>
      waitFor(`schedule of ${id} removed`, async () => {
        try {
          await describeSchedule(id);
          return false;
        } catch (err) {
          return err instanceof ScheduleNotFoundError;
        }
      }, 10_000);
    const created = (id: string) => waitFor('schedule created', () => describeSchedule(id).catch(() => undefined), 10_000);

    const deleted = await createUserTrigger({ cronExpression: '0 * * * *' });
    await created(deleted.id);
    assert.equal((await api(h.app, user).delete(`/api/user-triggers/${deleted.id}`)).statusCode, 204);
    await gone(deleted.id);

    const retyped = await createUserTrigger({ cronExpression: '0 * * * *' });
    await created(retyped.id);
    assert.equal((await api(h.app, user).patch(`/api/user-triggers/${retyped.id}`, { type: 'webhook', configJson: {} })).statusCode, 200);
    await gone(retyped.id);

    const agent = (await api(h.app, user).post('/api/agents', { name: 'scheduled agent' })).json();
    const agentTrigger = (await api(h.app, user).post(`/api/agents/${agent.id}/triggers`, { type: 'schedule', name: 's', configJson: { cronExpression: '@hourly' } })).json();
    await created(agentTrigger.id);
    assert.equal((await api(h.app, user).delete(`/api/agents/${agent.id}`)).statusCode, 204);
    await gone(agentTrigger.id);
  });

  it('every workflow carries AccountId, AgentId and TriggerId search attributes and its account as fairness key', async (t) => {
    const account = (await api(h.app, user).get('/api/account')).json() as { id: string };
    // A receiver that refuses: each delivery's first attempt fails and its workflow takes over the retries.
    const receiver = await startReceiver(t, () => ({ status: 503 }));
    const webhook = await api(h.app, user).post('/api/webhooks', { name: 'agent events', url: receiver.url, events: ['agent.created', 'agent.triggered'] });
    assert.equal(webhook.statusCode, 201, webhook.body);
    const agent = (await api(h.app, user).post('/api/agents', { name: 'tagged agent' })).json() as { id: string };
    // An agent trigger fired by the agent's own update: a fire workflow (an event fire) and the run it queues.
    const trigger = (
      await api(h.app, user).post(`/api/agents/${agent.id}/triggers`, { type: 'event', name: 'on update', configJson: { eventType: 'agent.updated' } })
    ).json() as { id: string };
    assert.equal((await api(h.app, user).patch(`/api/agents/${agent.id}`, { description: 'changed' })).statusCode, 200);
    const list = async (query: string) => {
      const ids: string[] = [];
      for await (const wf of h.engine.client.workflow.list({ query })) ids.push(wf.workflowId);
      return ids;
    };
    // The fire, the run it queued, and the deliveries of agent.created and agent.triggered.
    const byAgent = await waitFor('workflows visible by AgentId', async () => {
      const ids = await list(`AgentId = '${agent.id}'`);
      const kinds = ids.map((id) => id.split(':')[0]);
      return ['fire', 'run'].every((k) => kinds.includes(k)) && kinds.filter((k) => k === 'delivery').length === 2 && ids;
    }, 20_000);
    const fire = byAgent.find((id) => id.startsWith(`fire:${trigger.id}:event-`));
    assert.ok(fire, byAgent.join(', '));
    const byTrigger = await list(`TriggerId = '${trigger.id}'`);
    assert.ok(byTrigger.includes(fire));
    const byAccount = await list(`AccountId = '${account.id}'`);
    for (const id of byAgent) assert.ok(byAccount.includes(id), `${id} is tagged with its account`);
    // …and has its account as fairness key (docs/architecture.md § Limits and fairness), as a schedule's action does.
    for (const id of byAgent) {
      const { priority } = await h.engine.client.workflow.getHandle(id).describe();
      assert.equal(priority?.fairnessKey, account.id, `${id}'s fairness key`);
    }
    const cron = await createUserTrigger({ cronExpression: '0 0 1 1 *' });
    const action = await waitFor('its schedule', () => describeSchedule(cron.id).then((d) => d.action, () => undefined), 10_000);
    assert.equal(action.type === 'startWorkflow' && action.priority?.fairnessKey, account.id);
    await api(h.app, user).delete(`/api/user-triggers/${cron.id}`);
    await api(h.app, user).delete(`/api/webhooks/${webhook.json().id}`);
  });

  it('the reconciler removes an orphan schedule and re-creates a missing one', async () => {
    // An orphan: a schedule whose trigger does not exist (e.g. left by a crash before this design).
    const orphanId = randomUUID();
    const template = scheduleOptions({
      id: orphanId, account_id: user.id, agent_id: null, type: 'cron', enabled: true,
      config_json: { cronExpression: '0 0 1 1 *', timezone: 'UTC' },
    });
    await h.engine.client.schedule.create(template);
    // A missing one: the trigger exists but its schedule was deleted behind our back.
    const trigger = await createUserTrigger({ cronExpression: '0 0 1 1 *' });
    await waitFor('schedule created', () => describeSchedule(trigger.id).catch(() => undefined), 10_000);
    await schedule(trigger.id).delete();

    await waitFor('the sweep converges', async () => {
      await h.engine.sweep();
      await h.engine.handOff.drain();
      const orphan = await describeSchedule(orphanId).then(() => 'present', (err) => (err instanceof ScheduleNotFoundError ? 'gone' : 'error'));
      const restored = await describeSchedule(trigger.id).then(() => true, () => false);
      return orphan === 'gone' && restored;
    }, 20_000);
    await api(h.app, user).delete(`/api/user-triggers/${trigger.id}`);
  });
});
