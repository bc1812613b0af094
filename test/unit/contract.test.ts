import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fireKeyOf, fireKeys, fireWorkflowId, scheduledTimeOf, temporalTime } from '../../engine/contract';
import { workflowIds } from '../../engine/temporal/names';

/** The fire key (engine/contract.ts): one format, read back the way it was written. */
describe('the engine contract: fire keys', () => {
  const triggerId = '3f1c2a4e-0000-4000-8000-000000000001';
  const at = new Date('2026-11-21T10:00:02.000Z');

  it('a schedule fire key is the one Temporal makes: the schedule action id and the scheduled time', () => {
    assert.equal(temporalTime(at), '2026-11-21T10:00:02Z');
    assert.equal(fireKeys.schedule(at), 'schedule-2026-11-21T10:00:02Z');
    // Temporal appends `-<scheduled time>` to the action's workflow id.
    assert.equal(`${workflowIds.scheduledFire(triggerId)}-${temporalTime(at)}`, fireWorkflowId(triggerId, fireKeys.schedule(at)));
    assert.deepEqual(scheduledTimeOf(fireKeys.schedule(at)), at);
  });

  it('only a schedule fire key has a scheduled time', () => {
    for (const key of [fireKeys.manual('f1'), fireKeys.hook('f2'), fireKeys.event('e3'), 'schedule-not-a-time']) assert.equal(scheduledTimeOf(key), null, key);
    assert.deepEqual([fireKeys.manual('f1'), fireKeys.hook('f2'), fireKeys.event('e3')], ['manual-f1', 'hook-f2', 'event-e3']);
  });

  it('a fire workflow id gives its fire key back, and refuses another trigger\'s', () => {
    for (const key of [fireKeys.schedule(at), fireKeys.manual('f1'), fireKeys.event('e3')]) {
      assert.equal(fireKeyOf(fireWorkflowId(triggerId, key), triggerId), key);
      assert.equal(workflowIds.fire(triggerId, key), `fire:${triggerId}:${key}`);
    }
    assert.throws(() => fireKeyOf(fireWorkflowId('other', 'manual-f1'), triggerId), /is not a fire of trigger/);
  });
});
