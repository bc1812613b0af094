import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalTimeZone, cronExpressionProblem, describeCronExpression, nextFireTime, timeZoneProblem } from '../../lib/cron';
import { parseDuration } from '../../lib/durations';

describe('parseDuration', () => {
  it('reads whole units and compounds, largest first', () => {
    const cases: [string, number][] = [
      ['10s', 10_000], ['10m', 600_000], ['1h', 3_600_000], ['1h30m', 5_400_000], ['2d', 172_800_000],
      ['1500ms', 1500], ['1d2h3m4s5ms', 93_784_005], ['0s', 0], ['90m', 5_400_000],
    ];
    for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  });

  it('refuses anything else', () => {
    for (const text of ['', '10', 'h', '1.5h', '-1h', '1 h', ' 1h', '1h ', '30m1h', '1h1h', '1w', '1y', '1H', 'ms', '1hm', '9'.repeat(16) + 's', '9999999999d']) {
      assert.throws(() => parseDuration(text), Error, JSON.stringify(text));
    }
  });
});

describe('cron expressions', () => {
  it('accepts 5 fields, 6 with seconds first, the macros and @every', () => {
    for (const expression of [
      '0 9 * * *', '*/15 * * * *', '0 9 * * MON-FRI', '0 9 * jan,Jul *', '0 0 1 * *', '30 4 1-10/3 * *', '0 12 * * 7',
      '*/2 * * * * *', '0 0 9 * * 1', ' 0  9 * * * ',
      '@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly',
      '@every 5m', '@every 1h30m', '@every 1s', '@every 365d',
    ]) {
      assert.equal(cronExpressionProblem(expression), null, expression);
    }
  });

  it('refuses what cron-parser or Temporal would read differently, with the reason', () => {
    const cases: [string, RegExp][] = [
      ['', /empty/],
      ['* * * *', /expected 5 fields.*got 4/],
      ['0 0 0 * * * 2030', /year field is not supported/],
      ['60 * * * *', /Constraint error.*0-59/],
      ['0 24 * * *', /Constraint error/],
      ['0 0 32 * *', /Constraint error/],
      ['0 0 30 2 *', /day of month/],
      ['5-1 * * * *', /Invalid range/],
      ['*/0 * * * *', /cannot repeat at every 0/],
      ['0 0 L * *', /day-of-month field "L" is not supported/],
      ['0 0 * * 5L', /day-of-week field "5L" is not supported/],
      ['0 0 * * 1#2', /not supported/],
      ['0 0 ? * 1', /not supported/],
      ['H * * * *', /minute field "H" is not supported/],
      ['0 9 * * monday', /not supported/],
      ['0 9 * * xyz', /cannot resolve alias "xyz"/],
      ['0 0 1 * 1', /cannot both be restricted/],
      ['@reboot', /unknown macro/],
      ['@minutely', /unknown macro/],
      ['@daily extra', /unknown macro/],
      ['@every', /@every takes one duration/],
      ['@every 5', /@every "5" is not a duration/],
      ['@every 500ms', /at least 1s/],
      ['@every 1500ms', /whole number of seconds/],
      ['@every 366d', /at most 365d/],
      ['@every 14h/3h', /without a phase/],
      ['* '.repeat(101), /at most 200 characters/],
    ];
    for (const [expression, reason] of cases) {
      const problem = cronExpressionProblem(expression);
      assert.ok(problem, `${JSON.stringify(expression)} accepted`);
      assert.match(problem, reason, JSON.stringify(expression));
    }
  });

  it('describes each expression in the terms a Temporal schedule needs', () => {
    assert.deepEqual(describeCronExpression('0 9 * * 1-5'), {
      kind: 'cron',
      fields: { second: '0', minute: '0', hour: '9', dayOfMonth: '*', month: '*', dayOfWeek: '1-5' },
      temporalCronString: '0 0 9 * * 1-5 *',
    });
    assert.equal((describeCronExpression('*/2 * * * * *') as { temporalCronString: string }).temporalCronString, '*/2 * * * * * *');
    assert.equal((describeCronExpression('@midnight') as { temporalCronString: string }).temporalCronString, '0 0 0 * * * *');
    assert.equal((describeCronExpression('@annually') as { temporalCronString: string }).temporalCronString, '0 0 0 1 1 * *');
    assert.deepEqual(describeCronExpression('@every 1h30m'), { kind: 'every', intervalMs: 5_400_000 });
  });
});

describe('nextFireTime', () => {
  const at = (iso: string) => new Date(iso);

  it('reads the fields in the time zone and answers UTC instants', () => {
    // 2026-01-15 is winter in New York (UTC-5), 2026-07-15 summer (UTC-4).
    assert.equal(nextFireTime('0 9 * * *', 'America/New_York', at('2026-01-15T12:00:00Z'))!.toISOString(), '2026-01-15T14:00:00.000Z');
    assert.equal(nextFireTime('0 9 * * *', 'America/New_York', at('2026-01-15T14:00:00Z'))!.toISOString(), '2026-01-16T14:00:00.000Z');
    assert.equal(nextFireTime('0 9 * * *', 'America/New_York', at('2026-07-15T12:00:00Z'))!.toISOString(), '2026-07-15T13:00:00.000Z');
    assert.equal(nextFireTime('0 9 * * *', 'UTC', at('2026-01-15T12:00:00Z'))!.toISOString(), '2026-01-16T09:00:00.000Z');
    assert.equal(nextFireTime('30 0 * * *', 'Asia/Kolkata', at('2026-01-15T12:00:00Z'))!.toISOString(), '2026-01-15T19:00:00.000Z');
  });

  it('is strictly after the given instant', () => {
    assert.equal(nextFireTime('*/2 * * * * *', 'UTC', at('2026-01-15T12:00:00.000Z'))!.toISOString(), '2026-01-15T12:00:02.000Z');
    assert.equal(nextFireTime('*/2 * * * * *', 'UTC', at('2026-01-15T12:00:01.500Z'))!.toISOString(), '2026-01-15T12:00:02.000Z');
    assert.equal(nextFireTime('@hourly', 'UTC', at('2026-01-15T12:00:00.000Z'))!.toISOString(), '2026-01-15T13:00:00.000Z');
  });

  it('answers each question on its own, whatever was asked before (parsed expressions are reused)', () => {
    assert.equal(nextFireTime('0 9 * * *', 'UTC', at('2026-03-01T00:00:00Z'))!.toISOString(), '2026-03-01T09:00:00.000Z');
    assert.equal(nextFireTime('0 9 * * *', 'UTC', at('2026-01-01T10:00:00Z'))!.toISOString(), '2026-01-02T09:00:00.000Z');
    assert.equal(nextFireTime('0 9 * * *', 'Asia/Tokyo', at('2026-01-01T10:00:00Z'))!.toISOString(), '2026-01-02T00:00:00.000Z');
    assert.equal(nextFireTime('0 9 * * *', 'UTC', at('2026-03-01T00:00:00Z'))!.toISOString(), '2026-03-01T09:00:00.000Z');
  });

  it('handles the macros', () => {
    const from = at('2026-01-15T12:34:56Z');
    assert.equal(nextFireTime('@yearly', 'UTC', from)!.toISOString(), '2027-01-01T00:00:00.000Z');
    assert.equal(nextFireTime('@monthly', 'UTC', from)!.toISOString(), '2026-02-01T00:00:00.000Z');
    assert.equal(nextFireTime('@weekly', 'UTC', from)!.toISOString(), '2026-01-18T00:00:00.000Z'); // a Sunday
    assert.equal(nextFireTime('@midnight', 'Europe/Berlin', from)!.toISOString(), '2026-01-15T23:00:00.000Z');
  });

  it('aligns @every to multiples of the interval since the epoch, whatever the zone', () => {
    assert.equal(nextFireTime('@every 5m', 'UTC', at('2026-01-15T12:03:10Z'))!.toISOString(), '2026-01-15T12:05:00.000Z');
    assert.equal(nextFireTime('@every 5m', 'Asia/Kolkata', at('2026-01-15T12:05:00Z'))!.toISOString(), '2026-01-15T12:10:00.000Z');
    // 7 minutes don't divide an hour: the fires are multiples of 420 s since 1970.
    const next = nextFireTime('@every 7m', 'UTC', at('2026-01-15T12:00:00Z'))!.getTime();
    assert.equal(next % 420_000, 0);
    assert.ok(next > Date.parse('2026-01-15T12:00:00Z') && next <= Date.parse('2026-01-15T12:07:00Z'));
  });
});

describe('time zones', () => {
  it('accepts IANA names, fixing only the letter case', () => {
    assert.equal(canonicalTimeZone('UTC'), 'UTC');
    assert.equal(canonicalTimeZone('utc'), 'UTC');
    assert.equal(canonicalTimeZone('america/new_york'), 'America/New_York');
    assert.equal(canonicalTimeZone('Asia/Kolkata'), 'Asia/Kolkata');
    assert.equal(canonicalTimeZone('Etc/GMT+1'), 'Etc/GMT+1');
    assert.equal(canonicalTimeZone('ETC/UTC'), 'UTC');
    assert.equal(canonicalTimeZone('asia/kolkata'), new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Kolkata' }).resolvedOptions().timeZone);
    assert.equal(canonicalTimeZone('US/Pacific'), 'America/Los_Angeles');
  });

  it('refuses unknown names and offsets', () => {
    for (const zone of ['Mars/Base', '', '+01:00', 'GMT+1', 'Z', 'x'.repeat(101)]) {
      assert.equal(canonicalTimeZone(zone), null, zone);
    }
    assert.equal(timeZoneProblem('Mars/Base'), 'unknown IANA time zone "Mars/Base"');
    assert.equal(timeZoneProblem('Europe/Paris'), null);
  });
});
