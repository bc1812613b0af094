import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeCronExpression } from '../../lib/cron';
import { expectedTimes, judgeExpectedFires, type RecordedFire, type ScheduleVersion } from '../../lib/expected-fires';
import { localTime, scheduleClock } from '../../lib/schedule-times';

/** Every fire time in [from, to) of `expression` in `zone`, as UTC ISO strings. */
function between(expression: string, zone: string, from: string, to: string): string[] {
  const clock = scheduleClock(describeCronExpression(expression), zone);
  const out: string[] = [];
  for (let at = clock.next(new Date(Date.parse(from) - 1000)); at && at.getTime() < Date.parse(to); at = clock.next(at)) out.push(at.toISOString());
  return out;
}
const local = (times: string[], zone: string) => times.map((t) => localTime(new Date(t), zone));

/**
 * DST days, as Temporal's scheduler fires them (the same times `schedule.describe()` lists on a real server:
 * test/engine/schedule-truth.test.ts compares the two).
 */
describe('fire times on DST days', () => {
  it('Europe/Berlin, clocks forward (2027-03-28 02:00 → 03:00): 02:30 does not exist and does not fire', () => {
    const times = between('30 2 * * *', 'Europe/Berlin', '2027-03-27T00:00:00Z', '2027-03-30T00:00:00Z');
    assert.deepEqual(local(times, 'Europe/Berlin'), ['2027-03-27T02:30:00+01:00', '2027-03-29T02:30:00+02:00']);
    // An hourly trigger has 23 fires that day.
    assert.equal(between('0 * * * *', 'Europe/Berlin', '2027-03-27T23:00:00Z', '2027-03-28T22:00:00Z').length, 23);
  });

  it('Europe/Berlin, clocks back (2027-10-31 03:00 → 02:00): 02:30 fires once, in the second (CET) copy', () => {
    const times = between('30 2 * * *', 'Europe/Berlin', '2027-10-30T00:00:00Z', '2027-11-02T00:00:00Z');
    assert.deepEqual(local(times, 'Europe/Berlin'), ['2027-10-30T02:30:00+02:00', '2027-10-31T02:30:00+01:00', '2027-11-01T02:30:00+01:00']);
    assert.deepEqual(times.slice(1, 2), ['2027-10-31T01:30:00.000Z']);
  });

  it('America/New_York, clocks forward (2027-03-14 02:00 → 03:00): 02:30 does not exist and does not fire', () => {
    const times = between('30 2 * * *', 'America/New_York', '2027-03-13T00:00:00Z', '2027-03-16T12:00:00Z');
    assert.deepEqual(local(times, 'America/New_York'), ['2027-03-13T02:30:00-05:00', '2027-03-15T02:30:00-04:00', '2027-03-16T02:30:00-04:00']);
  });

  it('America/New_York, clocks back (2027-11-07 02:00 → 01:00): 01:30 fires twice, an hour apart (EDT, then EST)', () => {
    const times = between('30 1 * * *', 'America/New_York', '2027-11-06T00:00:00Z', '2027-11-08T12:00:00Z');
    assert.deepEqual(local(times, 'America/New_York'), [
      '2027-11-06T01:30:00-04:00',
      '2027-11-07T01:30:00-04:00',
      '2027-11-07T01:30:00-05:00',
      '2027-11-08T01:30:00-05:00',
    ]);
    assert.deepEqual(times.slice(1, 3), ['2027-11-07T05:30:00.000Z', '2027-11-07T06:30:00.000Z']);
  });

  it('@every counts intervals since the epoch, whatever the clocks do', () => {
    const times = between('@every 90m', 'America/New_York', '2027-11-07T03:00:00Z', '2027-11-07T09:00:00Z');
    assert.deepEqual(times, ['2027-11-07T03:00:00.000Z', '2027-11-07T04:30:00.000Z', '2027-11-07T06:00:00.000Z', '2027-11-07T07:30:00.000Z']);
  });
});

const v = (validFrom: string, fields: Partial<ScheduleVersion> = {}): ScheduleVersion => ({
  validFrom: new Date(validFrom),
  type: 'cron',
  enabled: true,
  cronExpression: '*/10 * * * *',
  timezone: 'UTC',
  overlapPolicy: 'skip',
  catchupWindow: '1h',
  ...fields,
});
const fire = (scheduledAt: string, recordedAfterMs: number, status: RecordedFire['status'] = 'fired'): RecordedFire => ({
  id: `fire-${scheduledAt}`,
  scheduledAt: new Date(scheduledAt),
  recordedAt: new Date(Date.parse(scheduledAt) + recordedAfterMs),
  status,
  runId: null,
});

describe('expected fires', () => {
  const judge = (versions: ScheduleVersion[], fires: RecordedFire[], from: string, to: string, now: string, corrections: string[] = []) => {
    const times = expectedTimes(versions, versions[0]!, new Date(Date.parse(from) - 1), new Date(to), 1000);
    return judgeExpectedFires(times, versions, fires, corrections.map((c) => new Date(c)), new Date(now), 60_000).map((e) => [
      e.scheduledAt.toISOString().slice(11, 16),
      e.status,
      e.lagMs,
    ]);
  };

  it('follows each version: before creation, enabled, disabled, a new expression', () => {
    const versions = [
      v('2026-05-01T10:05:00Z'),
      v('2026-05-01T10:25:00Z', { enabled: false }),
      v('2026-05-01T10:45:00Z', { cronExpression: '*/30 * * * *' }),
    ];
    const fires = [fire('2026-05-01T10:10:00Z', 1200), fire('2026-05-01T10:20:00Z', 800), fire('2026-05-01T11:00:00Z', 500)];
    assert.deepEqual(judge(versions, fires, '2026-05-01T10:00:00Z', '2026-05-01T11:05:00Z', '2026-05-01T13:00:00Z'), [
      ['10:00', 'before-created', null],
      ['10:10', 'fired', 1200],
      ['10:20', 'fired', 800],
      ['10:30', 'disabled', null],
      ['10:40', 'disabled', null],
      ['11:00', 'fired', 500],
    ]);
  });

  it('labels skipped fires by what skipped them, throttled ones as such', () => {
    const versions = [v('2026-05-01T09:00:00Z'), v('2026-05-01T10:10:00.500Z', { enabled: false })];
    // 10:10 was scheduled while enabled but ran after the disable: the trigger was disabled by then.
    const fires = [fire('2026-05-01T10:00:00Z', 100, 'skipped'), fire('2026-05-01T10:10:00Z', 900, 'skipped')];
    const fires2 = [fire('2026-05-01T09:50:00Z', 100, 'throttled')];
    assert.deepEqual(judge(versions, [...fires2, ...fires], '2026-05-01T09:50:00Z', '2026-05-01T10:11:00Z', '2026-05-01T13:00:00Z'), [
      ['09:50', 'throttled', 100],
      ['10:00', 'paused', 100],
      ['10:10', 'disabled', 900],
    ]);
  });

  it('overlap-skipped while the previous fire still ran; catchup-skipped when the schedule came back too late; missed; pending', () => {
    const versions = [v('2026-05-01T09:00:00Z', { catchupWindow: '15m' })];
    const fires = [
      // 10:00 was recorded at 10:25 (a worker away): 10:10 and 10:20 were skipped by the overlap policy.
      fire('2026-05-01T10:00:00Z', 25 * 60_000),
      fire('2026-05-01T10:30:00Z', 1000),
      // Nothing at 10:40, 10:50 or 11:00 (the schedule was not running); its next fire, 11:10, was recorded at
      // 11:10:30: 10:40 and 10:50 lie more than the 15 min catch-up window before that (Temporal did not make
      // them up), 11:00 does not (it should have been made up: missed).
      fire('2026-05-01T11:10:00Z', 30_000),
    ];
    assert.deepEqual(judge(versions, fires, '2026-05-01T10:00:00Z', '2026-05-01T11:45:00Z', '2026-05-01T11:45:30Z').map(([t, s]) => [t, s]), [
      ['10:00', 'fired'],
      ['10:10', 'overlap-skipped'],
      ['10:20', 'overlap-skipped'],
      ['10:30', 'fired'],
      ['10:40', 'catchup-skipped'],
      ['10:50', 'catchup-skipped'],
      ['11:00', 'missed'],
      ['11:10', 'fired'],
      ['11:20', 'missed'],
      // 11:30 and 11:40: their catch-up window (15 min) + grace (1 min) is still open at 11:45:30.
      ['11:30', 'pending'],
      ['11:40', 'pending'],
    ]);
  });

  it('allow_all starts every fire: a fire still running skips nothing', () => {
    const versions = [v('2026-05-01T09:00:00Z', { overlapPolicy: 'allow_all' })];
    const fires = [fire('2026-05-01T10:00:00Z', 25 * 60_000), fire('2026-05-01T10:30:00Z', 1000)];
    assert.deepEqual(judge(versions, fires, '2026-05-01T10:10:00Z', '2026-05-01T10:21:00Z', '2026-05-01T13:00:00Z').map(([t, s]) => [t, s]), [
      ['10:10', 'missed'],
      ['10:20', 'missed'],
    ]);
  });

  it('a time before a correction of its schedule (missing or paused in Temporal) is missed, whatever came after', () => {
    const versions = [v('2026-05-01T09:00:00Z', { catchupWindow: '10s' })];
    const fires = [fire('2026-05-01T10:00:00Z', 500), fire('2026-05-01T10:40:00Z', 500)];
    assert.deepEqual(
      judge(versions, fires, '2026-05-01T10:10:00Z', '2026-05-01T10:31:00Z', '2026-05-01T13:00:00Z', ['2026-05-01T10:35:00Z']).map(([t, s]) => [t, s]),
      [['10:10', 'missed'], ['10:20', 'missed'], ['10:30', 'missed']],
    );
  });

  it('DST days in expected fires: a Berlin time that does not exist is not expected, a New York one that repeats is expected twice', () => {
    const berlin = [v('2027-03-01T00:00:00Z', { cronExpression: '30 2 * * *', timezone: 'Europe/Berlin' })];
    assert.deepEqual(
      expectedTimes(berlin, berlin[0]!, new Date('2027-03-27T00:00:00Z'), new Date('2027-03-30T00:00:00Z'), 10).map((t) => localTime(t.at, 'Europe/Berlin')),
      ['2027-03-27T02:30:00+01:00', '2027-03-29T02:30:00+02:00'],
    );
    const ny = [v('2027-11-01T00:00:00Z', { cronExpression: '30 1 * * *', timezone: 'America/New_York' })];
    assert.deepEqual(
      expectedTimes(ny, ny[0]!, new Date('2027-11-07T00:00:00Z'), new Date('2027-11-08T00:00:00Z'), 10).map((t) => t.at.toISOString()),
      ['2027-11-07T05:30:00.000Z', '2027-11-07T06:30:00.000Z'],
    );
  });
});
