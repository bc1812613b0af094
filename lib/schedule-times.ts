import { CronExpressionParser } from 'cron-parser';

/** The fields of a 6-field cron expression (lib/cron.ts parses and checks them). */
export interface CronFields {
  second: string;
  minute: string;
  hour: string;
  dayOfMonth: string;
  month: string;
  dayOfWeek: string;
}

/** What an expression means, in the terms a Temporal ScheduleSpec needs. */
export type CronSpec =
  | {
      kind: 'cron';
      fields: CronFields;
      /** The same schedule as Temporal's 7-field cron string: second minute hour dom month dow year. */
      temporalCronString: string;
    }
  | {
      kind: 'every';
      /** Fires at every multiple of this since 1970-01-01T00:00:00Z (Temporal IntervalSpec, phase 0). */
      intervalMs: number;
    };

/**
 * When a cron/schedule trigger fires, computed the way Temporal's scheduler computes it (docs/api.md § Triggers,
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

const DAY_MS = 86_400_000;

/** A year of a zone's offsets: the offset at its start, and each change after it (the instant and the new offset). */
interface YearOffsets {
  start: number;
  initial: number;
  changes: { at: number; offset: number }[];
}

/**
 * The wall clock of a time zone: an instant's local fields, and a local time's instant. Intl answers offsets
 * slowly (~10 µs a call), so each year's offsets are read once: at every day's start, and, where two days
 * differ, down to the second the change happens (zones change their clocks at most a few times a year,
 * never twice in a day). Then an offset is a lookup.
 */
class Zone {
  private readonly format: Intl.DateTimeFormat;
  private readonly years = new Map<number, YearOffsets>();

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

  /** The offset from UTC at the whole second `ms`, as Intl computes it. */
  private exactOffset(ms: number): number {
    const parts: Record<string, number> = {};
    for (const part of this.format.formatToParts(new Date(ms))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
    return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) - ms;
  }

  private yearOf(year: number): YearOffsets {
    let known = this.years.get(year);
    if (known) return known;
    const start = Date.UTC(year, 0, 1);
    const end = Date.UTC(year + 1, 0, 1);
    const initial = this.exactOffset(start);
    const changes: { at: number; offset: number }[] = [];
    let previous = { at: start, offset: initial };
    for (let day = start + DAY_MS; day <= end; day += DAY_MS) {
      const offset = this.exactOffset(day);
      if (offset !== previous.offset) {
        // The second it changed: the first whose offset is the new one.
        let [lo, hi] = [previous.at, day];
        while (hi - lo > 1000) {
          const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
          if (this.exactOffset(mid) === previous.offset) lo = mid;
          else hi = mid;
        }
        if (hi < end) changes.push({ at: hi, offset });
      }
      previous = { at: day, offset };
    }
    known = { start, initial, changes };
    if (this.years.size >= 200) this.years.clear();
    this.years.set(year, known);
    return known;
  }

  /** The zone's offset from UTC at the instant `ms`, in ms. */
  private offset(ms: number): number {
    const second = Math.floor(ms / 1000) * 1000;
    const table = this.yearOf(new Date(second).getUTCFullYear());
    let offset = table.initial;
    for (const change of table.changes) {
      if (change.at <= second) offset = change.offset;
      else break;
    }
    return offset;
  }

  /** The local fields of `ms` (whole seconds: Temporal's resolution). */
  wall(ms: number): Wall {
    const local = new Date(Math.floor(ms / 1000) * 1000 + this.offset(ms));
    return {
      y: local.getUTCFullYear(),
      mo: local.getUTCMonth() + 1,
      d: local.getUTCDate(),
      h: local.getUTCHours(),
      mi: local.getUTCMinutes(),
      s: local.getUTCSeconds(),
    };
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

  /** The offset at `ms`, for showing a local time. */
  offsetAt(ms: number): number {
    return this.offset(ms);
  }
}

const zones = new Map<string, Zone>();
function zoneOf(name: string): Zone {
  let zone = zones.get(name);
  if (!zone) {
    if (zones.size >= 1000) zones.clear();
    zone = new Zone(name);
    zones.set(name, zone);
  }
  return zone;
}

const utc = (w: Wall) => Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s);
const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const daysIn = (mo: number, y: number) => (mo === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(mo) ? 30 : 31);
const weekday = (y: number, mo: number, d: number) => new Date(Date.UTC(y, mo - 1, d)).getUTCDay();

/** The values each field of a cron expression allows, ascending (day of week 0–6, Sunday 0). */
interface Calendar {
  second: number[];
  minute: number[];
  hour: number[];
  dayOfMonth: Set<number>;
  month: Set<number>;
  dayOfWeek: Set<number>;
}

function calendarOf(fields: string): Calendar {
  const f = CronExpressionParser.parse(fields, { tz: 'UTC' }).fields;
  const sorted = (values: readonly (number | string)[]) => [...new Set(values.map(Number))].sort((a, b) => a - b);
  return {
    second: sorted(f.second.values),
    minute: sorted(f.minute.values),
    hour: sorted(f.hour.values),
    dayOfMonth: new Set(sorted(f.dayOfMonth.values)),
    month: new Set(sorted(f.month.values)),
    dayOfWeek: new Set(sorted(f.dayOfWeek.values).map((v) => v % 7)),
  };
}

/** The smallest allowed value ≥ `from`, or undefined: what stepping one by one until a match would reach. */
const firstFrom = (allowed: number[], from: number) => allowed.find((v) => v >= from);

/**
 * The first time the calendar matches strictly after `after` (ms), or null before 2101. The walk over the
 * wall clock is Temporal's (its scheduler's compiled calendar), including its two DST rules above: fields
 * are matched from the year inwards; a field that cannot match moves the next outer one on and resets the
 * inner ones; stepping from the last minute of an hour into an hour that begins two hours after it (the
 * repeated hour, seen from the hour before it) walks that hour again, an hour later.
 */
function nextCalendarTime(cal: Calendar, zone: Zone, after: number): number | null {
  let { y, mo, d, h, mi, s } = zone.wall(after);
  // Already in the second copy of a repeated hour: the hour an hour ago reads the same.
  let shift = zone.wall(after - HOUR_MS).h === h ? HOUR_MS : 0;
  s += 1;
  outer: for (;;) {
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

    while (!cal.month.has(mo)) {
      [mo, d, h, mi, s, shift] = [mo + 1, 1, 0, 0, 0, 0];
      if (mo > 12) continue outer;
    }
    while (!cal.dayOfMonth.has(d) || !cal.dayOfWeek.has(weekday(y, mo, d))) {
      [d, h, mi, s, shift] = [d + 1, 0, 0, 0, 0];
      if (d > daysIn(mo, y)) continue outer;
    }
    const hour = firstFrom(cal.hour, h);
    if (hour === undefined) {
      [h, mi, s, shift] = [24, 0, 0, 0];
      continue;
    }
    if (hour !== h) [h, mi, s, shift] = [hour, 0, 0, 0];
    const minute = firstFrom(cal.minute, mi);
    if (minute === undefined) {
      [mi, s] = [60, 0];
      continue;
    }
    if (minute !== mi) [mi, s] = [minute, 0];
    const second = firstFrom(cal.second, s);
    if (second === undefined) {
      s = 60;
      continue;
    }
    s = second;
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
    const zone = zoneOf(timezone);
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
  const zone = zoneOf(timezone);
  const w = zone.wall(at.getTime());
  const offsetMinutes = Math.round(zone.offsetAt(at.getTime()) / 60_000);
  const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0');
  const sign = offsetMinutes < 0 ? '-' : '+';
  return `${pad(w.y, 4)}-${pad(w.mo)}-${pad(w.d)}T${pad(w.h)}:${pad(w.mi)}:${pad(w.s)}${sign}${pad(Math.trunc(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}`;
}
