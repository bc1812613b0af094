import { CronExpressionParser } from 'cron-parser';
import { DAY_MS, parseDuration, SECOND_MS } from './durations';
import { scheduleClock, type CronFields, type CronSpec } from './schedule-times';

/** A cron/schedule trigger's catch-up window when its config names none (docs/api.md § Triggers). */
export const DEFAULT_CATCHUP_WINDOW = '1h';

export type { CronFields, CronSpec } from './schedule-times';

/**
 * Cron expressions of schedule/cron triggers (docs/api.md § Triggers). Accepted:
 * - 5 fields `minute hour day-of-month month day-of-week`;
 * - 6 fields with seconds first `second minute hour day-of-month month day-of-week`;
 * - the macros @yearly @annually @monthly @weekly @daily @midnight @hourly;
 * - `@every <duration>` (e.g. `@every 5m`, `@every 1h30m`; whole seconds, 1s to 365d), fired at the
 *   multiples of the interval since the Unix epoch, the way a Temporal IntervalSpec aligns.
 *
 * The accepted syntax is what both cron-parser (which computes `nextFireAt` here) and Temporal's
 * schedule spec (which fires it) read the same way: numbers, 3-letter month/day names, `*`, ranges
 * `a-b`, lists `a,b` and steps `/n`. Quartz/Jenkins extras (`L`, `W`, `#`, `?`, `H`) and a year field
 * are refused, and so is restricting both day-of-month and day-of-week: classic cron fires when
 * EITHER matches, Temporal when BOTH do, and a trigger must not mean two things.
 */

export const MAX_CRON_EXPRESSION_LENGTH = 200;
const MIN_EVERY_MS = SECOND_MS;
const MAX_EVERY_MS = 365 * DAY_MS;

export class CronExpressionError extends Error {}

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const FIELD_NAMES = ['second', 'minute', 'hour', 'dayOfMonth', 'month', 'dayOfWeek'] as const;
const LABELS: Record<keyof CronFields, string> = {
  second: 'second',
  minute: 'minute',
  hour: 'hour',
  dayOfMonth: 'day-of-month',
  month: 'month',
  dayOfWeek: 'day-of-week',
};
const NUMERIC = /^[0-9*,/-]+$/;
/** Month and day-of-week may also use 3-letter names (jan, mon). */
const NAMED = /^(?:[0-9*,/-]|[A-Za-z]{3}(?![A-Za-z]))+$/;

function fail(reason: string): never {
  throw new CronExpressionError(reason);
}

function interpretEvery(rest: string): CronSpec {
  if (rest.includes('/')) fail('@every takes a single duration, without a phase (e.g. "@every 15m")');
  let intervalMs: number;
  try {
    intervalMs = parseDuration(rest);
  } catch (err) {
    return fail(`@every ${(err as Error).message}`);
  }
  if (intervalMs < MIN_EVERY_MS) fail('@every needs an interval of at least 1s');
  if (intervalMs % SECOND_MS !== 0) fail('@every needs a whole number of seconds');
  if (intervalMs > MAX_EVERY_MS) fail('@every allows at most 365d');
  return { kind: 'every', intervalMs };
}

/** The fields of a cron expression, checked for the syntax both cron-parser and Temporal read alike. */
function interpretFields(expression: string): CronSpec {
  const atoms = expression.split(/\s+/);
  if (atoms.length === 7) fail('a year field is not supported; use 5 fields, or 6 with seconds first');
  if (atoms.length !== 5 && atoms.length !== 6) {
    fail(`expected 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first, got ${atoms.length}`);
  }
  const values = atoms.length === 5 ? ['0', ...atoms] : atoms;
  const fields = Object.fromEntries(FIELD_NAMES.map((name, i) => [name, values[i]!])) as unknown as CronFields;
  for (const name of FIELD_NAMES) {
    const value = fields[name];
    const allowed = name === 'month' || name === 'dayOfWeek' ? NAMED : NUMERIC;
    if (!allowed.test(value)) {
      fail(`${LABELS[name]} field "${value}" is not supported; use numbers${allowed === NAMED ? ', 3-letter names' : ''}, *, ranges a-b, lists a,b and steps /n`);
    }
  }
  if (fields.dayOfMonth !== '*' && fields.dayOfWeek !== '*') {
    fail('day-of-month and day-of-week cannot both be restricted; set one of them to *');
  }
  return { kind: 'cron', fields, temporalCronString: `${cronParserString(fields)} *` };
}

function cronParserString(fields: CronFields): string {
  return FIELD_NAMES.map((n) => fields[n]).join(' ');
}

/** The expression's meaning, without asking cron-parser whether its values are in range. */
function interpret(expression: string): CronSpec {
  if (expression.length > MAX_CRON_EXPRESSION_LENGTH) fail(`must be at most ${MAX_CRON_EXPRESSION_LENGTH} characters`);
  const text = expression.trim();
  if (text === '') fail('is empty');
  if (!text.startsWith('@')) return interpretFields(text);
  const [macro, ...rest] = text.split(/\s+/);
  if (macro === '@every') {
    if (rest.length !== 1) fail('@every takes one duration, e.g. "@every 5m" or "@every 1h30m"');
    return interpretEvery(rest[0]!);
  }
  const fields = MACROS[macro!];
  if (!fields || rest.length > 0) fail(`unknown macro "${text}"; use @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>`);
  return interpretFields(fields);
}

/** Parses and validates `expression`; throws CronExpressionError with the reason when it is not accepted. */
export function describeCronExpression(expression: string): CronSpec {
  const spec = interpret(expression);
  if (spec.kind === 'cron') {
    // cron-parser checks ranges, steps and names, and that the expression can fire at all.
    try {
      CronExpressionParser.parse(cronParserString(spec.fields), { tz: 'UTC' }).next();
    } catch (err) {
      fail((err as Error).message);
    }
  }
  return spec;
}

/** The reason `expression` is refused, or null when it is accepted. */
export function cronExpressionProblem(expression: string): string | null {
  try {
    describeCronExpression(expression);
    return null;
  } catch (err) {
    if (err instanceof CronExpressionError) return err.message;
    throw err;
  }
}

/** The reason `timezone` is refused, or null for a name Intl knows (IANA, e.g. "America/New_York", "UTC"). */
export function timeZoneProblem(timezone: string): string | null {
  return canonicalTimeZone(timezone) === null ? `unknown IANA time zone ${JSON.stringify(timezone)}` : null;
}

/**
 * The zone name to store, spelled so that Temporal (Go's case-sensitive tzdata lookup) finds it too.
 * Intl accepts any letter case, so: a name that is Intl's own zone in another case gets Intl's spelling
 * ("utc" → "UTC", "america/new_york" → "America/New_York"); an alias written the IANA way (every
 * segment capitalised, e.g. "Asia/Kolkata") stays as written; any other spelling of an alias gets Intl's
 * canonical name ("ETC/UTC" → "UTC", "US/Pacific" → "America/Los_Angeles"). Null when the zone is unknown.
 */
export function canonicalTimeZone(timezone: string): string | null {
  // Offsets ("+01:00") are valid to newer Intl versions but are not IANA names.
  if (timezone.length === 0 || timezone.length > 100 || /^[+-]/.test(timezone)) return null;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  if (resolved.toLowerCase() === timezone.toLowerCase()) return resolved;
  const writtenTheIanaWay = timezone.split('/').every((segment) => /^[A-Z]/.test(segment) && /[a-z]/.test(segment));
  return writtenTheIanaWay ? timezone : resolved;
}

/**
 * The first fire strictly after `after`, as the trigger's Temporal Schedule fires (lib/schedule-times.ts:
 * the same walk over the wall clock, DST days included). The expression must be valid
 * (describeCronExpression); null when it never fires again.
 */
export function nextFireTime(expression: string, timezone: string, after: Date): Date | null {
  return scheduleClock(interpret(expression), timezone).next(after);
}
