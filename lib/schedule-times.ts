import { CronExpressionParser } from 'cron-parser';
import type { CronSpec } from './cron';

/**
 * When a cron/schedule trigger fires, computed the way Temporal's scheduler computes it (README § Triggers,
 * *DST days*), so that a preview, `nextFireAt` and the expected fires are the times the Schedule really
 * fires at — tested against `schedule.describe()` of a real server (test/engine/schedule-truth.test.ts).
 *
 * A cron expression is matched field by field on the wall clock of the trigger's zone, one second after
 * another, and the wall time found is turned into an instant as Go's `time.Date` does. What that means on
 * the days the clocks change:
 * - a wall time that does not exist (the hour skipped when clocks go forward) does not fire that day;
 * - in the hour that happens twice (clocks go back), a time in it fires twice when the zone is west of
 *   Greenwich (America/New_York: 01:30 EDT, then 01:30 EST, an hour later), and once, in the second
 *   (standard-time) copy, east of it (Europe/Berlin: 02:30 CET only). Temporal steps into the repeated
 *   hour only while walking minute by minute from the hour before: the first copy is the one `time.Date`
 *   picks, the second is found an hour after it.
 * - `@every <interval>` counts whole intervals since the Unix epoch: no wall clock, no DST.
 */

const HOUR_MS = 3_600_000;
/** Temporal's calendars stop here (its maxCalendarYear). */
const LAST_YEAR = 2100;

interface Wall {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
}

/** The wall clock of a time zone: an instant's local fields, and a local time's instant. */
class Zone {
  private readonly format: Intl.DateTimeFormat;

  constructor(readonly name: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  /** The local fields of `ms` (whole seconds: Temporal's resolution). */
  wall(ms: number): Wall {
    const parts: Record<string, number> = {};
    for (const part of this.format.formatToParts(new Date(ms))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
    return { y: parts.year!, mo: parts.month!, d: parts.day!, h: parts.hour!, mi: parts.minute!, s: parts.second! };
  }

  /** The zone's offset from UTC at the instant `ms`, in ms. */
  private offset(ms: number): number {
    const w = this.wall(ms);
    return utc(w) - Math.floor(ms / 1000) * 1000;
  }

  /**
   * The instant of a local time, as Go's time.Date gives it: the offset in force at the local time read as
   * UTC, unless the instant that offset gives falls under another offset, which is then taken. A local time
   * skipped by a change of clocks comes out as a time after it; one that happens twice, as the copy whose
   * offset is in force an offset's width later in UTC (the first copy west of Greenwich, the second east).
   */
  instant(w: Wall): number {
    const asUtc = utc(w);
    const first = this.offset(asUtc);
    const second = this.offset(asUtc - first);
    return asUtc - second;
  }
}

const utc = (w: Wall) => Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s);
const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const daysIn = (mo: number, y: number) => (mo === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(mo) ? 30 : 31);
const weekday = (y: number, mo: number, d: number) => new Date(Date.UTC(y, mo - 1, d)).getUTCDay();

/** The values each field of a cron expression allows (day of week 0–6, Sunday 0). */
interface Calendar {
  second: Set<number>;
  minute: Set<number>;
  hour: Set<number>;
  dayOfMonth: Set<number>;
  month: Set<number>;
  dayOfWeek: Set<number>;
}

function calendarOf(fields: string): Calendar {
  const f = CronExpressionParser.parse(fields, { tz: 'UTC' }).fields;
  const set = (values: readonly (number | string)[]) => new Set(values.map(Number));
  return {
    second: set(f.second.values),
    minute: set(f.minute.values),
    hour: set(f.hour.values),
    dayOfMonth: set(f.dayOfMonth.values),
    month: set(f.month.values),
    dayOfWeek: new Set([...set(f.dayOfWeek.values)].map((v) => v % 7)),
  };
}

/**
 * The first time the calendar matches strictly after `after` (ms), or null before 2101. The walk over the
 * wall clock is Temporal's (its scheduler's compiled calendar), including its two DST rules above.
 */
function nextCalendarTime(cal: Calendar, zone: Zone, after: number): number | null {
  let { y, mo, d, h, mi, s } = zone.wall(after);
  // Already in the second copy of a repeated hour: the hour an hour ago reads the same.
  let shift = zone.wall(after - HOUR_MS).h === h ? HOUR_MS : 0;
  s += 1;
  for (;;) {
    // Carry what overflowed, and notice stepping from an hour into one that begins two hours later.
    if (s >= 60) [mi, s] = [mi + 1, 0];
    if (mi >= 60) {
      const hourStart = zone.instant({ y, mo, d, h, mi: 0, s: 0 });
      [h, mi] = [h + 1, 0];
      const nextHourStart = zone.instant({ y, mo, d, h, mi: 0, s: 0 });
      if (shift === 0 && nextHourStart - hourStart > HOUR_MS) [h, shift] = [h - 1, HOUR_MS];
      else shift = 0;
    }
    if (h >= 24) [d, h] = [d + 1, 0];
    if (d > daysIn(mo, y)) [mo, d] = [mo + 1, 1];
    if (mo > 12) [y, mo] = [y + 1, 1];
    if (y > LAST_YEAR) return null;

    if (!cal.month.has(mo)) {
      [mo, d, h, mi, s, shift] = [mo + 1, 1, 0, 0, 0, 0];
      if (mo > 12) [y, mo] = [y + 1, 1];
      continue;
    }
    if (!cal.dayOfMonth.has(d) || !cal.dayOfWeek.has(weekday(y, mo, d))) {
      [d, h, mi, s, shift] = [d + 1, 0, 0, 0, 0];
      continue;
    }
    if (!cal.hour.has(h)) {
      [h, mi, s, shift] = [h + 1, 0, 0, 0];
      continue;
    }
    if (!cal.minute.has(mi)) {
      [mi, s] = [mi + 1, 0];
      continue;
    }
    if (!cal.second.has(s)) {
      s += 1;
      continue;
    }
    const at = zone.instant({ y, mo, d, h, mi, s });
    // A wall time that does not exist comes out in another hour: it does not fire.
    if (zone.wall(at).h !== h) {
      [h, mi, s] = [h + 1, 0, 0];
      continue;
    }
    return at + shift;
  }
}

/** The fire times of one expression in one zone, one after another. */
export interface ScheduleClock {
  /** The first fire time strictly after `after`, or null when there is none (before 2101). */
  next(after: Date): Date | null;
}

const clocks = new Map<string, ScheduleClock>();
const MAX_CLOCKS = 1000;

/** The fire times of `spec` (an accepted expression, lib/cron.ts) in `timezone`. Cached; bounded. */
export function scheduleClock(spec: CronSpec, timezone: string): ScheduleClock {
  if (spec.kind === 'every') {
    const every = spec.intervalMs;
    // Whole intervals since the epoch, from the second `after` is in (Temporal's IntervalSpec, phase 0).
    return { next: (after) => new Date((Math.floor(Math.floor(after.getTime() / 1000) * 1000 / every) + 1) * every) };
  }
  const key = `${timezone}\u0000${spec.temporalCronString}`;
  let clock = clocks.get(key);
  if (!clock) {
    const cal = calendarOf(spec.temporalCronString.replace(/ \*$/, ''));
    const zone = new Zone(timezone);
    clock = {
      next: (after) => {
        const at = nextCalendarTime(cal, zone, after.getTime());
        return at === null ? null : new Date(at);
      },
    };
    if (clocks.size >= MAX_CLOCKS) clocks.clear();
    clocks.set(key, clock);
  }
  return clock;
}

/** The local time of `at` in `timezone` with its offset, e.g. `2027-03-28T03:30:00+02:00`. */
export function localTime(at: Date, timezone: string): string {
  const zone = new Zone(timezone);
  const w = zone.wall(at.getTime());
  const offsetMinutes = Math.round((utc(w) - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
  const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0');
  const sign = offsetMinutes < 0 ? '-' : '+';
  return `${pad(w.y, 4)}-${pad(w.mo)}-${pad(w.d)}T${pad(w.h)}:${pad(w.mi)}:${pad(w.s)}${sign}${pad(Math.trunc(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}`;
}
