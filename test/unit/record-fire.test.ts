import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scheduledTimeOf } from '../../engine/contract';
import { FireRateExceeded, firedEvent, overRate, rootEventOf, skipReason } from '../../engine/fires/record-fire';
import { testConfig } from '../helpers/config';

/** The rules of a fire (engine/fires/record-fire.ts) that need no database: whether it goes ahead, and what it writes. */
describe('record fire: rules', () => {
  const model = testConfig('postgres://127.0.0.1/unused', { MODEL_BASE_URL: 'http://127.0.0.1:9/v1', MODEL_TOKENS_PER_DAY: '100' }).model;
  const noModel = testConfig('postgres://127.0.0.1/unused', { MODEL_TOKENS_PER_DAY: '100' }).model;
  const trigger = { enabled: true, agent_id: 'agent-1', agent_status: 'active' as const, agent_model: 'gpt-test', tokens_today: 0 };

  it("reads a schedule fire's time from its key; other keys have none", () => {
    assert.deepEqual(scheduledTimeOf('schedule-2026-11-21T10:00:02Z'), new Date('2026-11-21T10:00:02Z'));
    assert.equal(scheduledTimeOf('manual-6b1f'), null);
    assert.equal(scheduledTimeOf('event-2026-11-21T10:00:02Z'), null);
    assert.equal(scheduledTimeOf('schedule-not-a-time'), null);
  });

  it('skips a disabled trigger first, then one whose agent is a template or paused', () => {
    assert.equal(skipReason(trigger, model), null);
    assert.equal(skipReason({ ...trigger, enabled: false, agent_status: 'paused' }, model), 'trigger_disabled');
    assert.equal(skipReason({ ...trigger, agent_status: 'template' }, model), 'agent_template');
    assert.equal(skipReason({ ...trigger, agent_status: 'paused' }, model), 'agent_paused');
    assert.equal(skipReason({ ...trigger, agent_id: null, agent_status: null }, model), null, 'a trigger linked to no agent');
  });

  it("skips a linked agent's fire once its account has spent MODEL_TOKENS_PER_DAY, only when its runs use the model", () => {
    assert.equal(skipReason({ ...trigger, tokens_today: 99 }, model), null);
    assert.equal(skipReason({ ...trigger, tokens_today: 100 }, model), 'model_tokens_per_day');
    assert.equal(skipReason({ ...trigger, tokens_today: 100 }, noModel), null, 'no model deployed: its runs do not use one');
    assert.equal(skipReason({ ...trigger, agent_model: null, tokens_today: 100 }, model), null, 'an agent naming no model, no default model');
    assert.equal(skipReason({ ...trigger, agent_id: null, agent_status: null, tokens_today: 100 }, model), null, 'not linked');
  });

  it('over FIRES_PER_MINUTE: a schedule or event fire is throttled, a manual or hook fire refused with when to retry', () => {
    assert.deepEqual(overRate('schedule', 60, 7), { status: 'throttled', reason: 'fires_per_minute' });
    assert.deepEqual(overRate('event', 60, 7), { status: 'throttled', reason: 'fires_per_minute' });
    for (const source of ['manual', 'webhook'] as const) {
      assert.throws(
        () => overRate(source, 60, 7),
        (err: unknown) => err instanceof FireRateExceeded && err.perMinute === 60 && err.retryAfterSeconds === 7 && /at most 60 per minute.*retry in 7 seconds/.test(err.message),
      );
    }
  });

  it("an event fire stays in its cause's chain; another fire that goes ahead roots one; a fire that does not, none", () => {
    assert.equal(rootEventOf({ rootEventId: 'root' }, 'fired', 'own'), 'root');
    assert.equal(rootEventOf({ rootEventId: 'root' }, 'throttled', 'own'), 'root');
    assert.equal(rootEventOf({}, 'fired', 'own'), 'own');
    assert.equal(rootEventOf({}, 'skipped', 'own'), null);
    assert.equal(rootEventOf({}, 'throttled', 'own'), null);
  });

  it('a fire linked to an agent writes agent.triggered with its run; one linked to none, trigger.fired', () => {
    assert.deepEqual(firedEvent({ id: 't1', agent_id: 'a1' }, { fireId: 'f1', source: 'manual', runId: 'r1' }), {
      type: 'agent.triggered',
      data: { triggerId: 't1', fireId: 'f1', source: 'manual', agentId: 'a1', runId: 'r1' },
    });
    assert.deepEqual(firedEvent({ id: 't2', agent_id: null }, { fireId: 'f2', source: 'schedule', runId: null }), {
      type: 'trigger.fired',
      data: { triggerId: 't2', fireId: 'f2', source: 'schedule' },
    });
  });
});
