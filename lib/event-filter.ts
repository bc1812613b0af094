import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import { valueAtPath } from './json-path';
import { compileRegex, searchRegex } from './re2-cache';
import { FilterBudgetSpent, type RegexThread } from './regex-thread';

/**
 * The `eventFilter` of event, agent_finished and agent_output triggers (docs/api.md § Triggers, `eventFilter`).
 *
 * An object whose keys are dotted paths into the event's `data` and whose values are conditions; an
 * event matches when every condition holds (an empty filter matches every event of the type):
 * - a JSON scalar (string, number, boolean, null): the value at the path must be equal (same type);
 * - `{ "$contains": "text" }`: the value at the path is a string containing the text;
 * - `{ "$regex": "pattern" }`: the value at the path is a string the RE2 regular expression matches
 *   somewhere, the whole value looked at (below).
 * A path that is missing never matches, not even `null`. A path segment that is a number indexes an
 * array (`items.0.id`).
 *
 * Paths start at `data`, except for agent_output triggers, which match on `data.output` (docs/api.md § Triggers):
 * their paths start inside the run's output, e.g. `{ "tools.lookup.result.status": "ok" }`.
 *
 * `$regex` is RE2 (lib/re2-cache.ts), so matching takes time linear in the input whatever the pattern
 * (docs/architecture.md § Limits and fairness): no backreferences or lookaround, refused when written, as
 * is a pattern that compiles to more than MAX_PROGRAM_SIZE instructions. Every value is matched in full,
 * up to the largest a hook accepts (1 MiB). Linear is not free — the worst inputs cost time per character
 * times the size of the compiled program, a *unit* — so a condition costing more than SYNC_REGEX_UNITS
 * (a long value) is matched by RE2 on the process's matching thread (lib/regex-thread.ts), never on the
 * event loop; one costing less is matched by re2js here, in a few milliseconds at most. Equality and `$contains`
 * (String.includes) cost next to nothing beside it. What an event's filters may cost in all is its
 * fan-out's budget (matchEventFilters, engine/events/fan-out.ts): a filter is either evaluated in full or
 * not at all, and one not evaluated is recorded (a `skipped` fire, reason `filter_budget`), never missed
 * silently.
 *
 * What differs from a JavaScript RegExp without flags: flags are written inline (`(?i)`, `(?s)` to let
 * `.` match `\n`, `(?m)`); matching is by code point (`.` is a whole emoji; `\pL`, `\p{Greek}` and
 * `\x{1F600}` work, `\uXXXX` does not); `.` matches anything but `\n`, so also `\r` and U+2028; `\s` is
 * ASCII `[\t\n\f\r ]` only; `\d`, `\w` and `\b` are ASCII in both; `\Q…\E` and `[[:alpha:]]` work,
 * `[^]` does not. A pattern stored before RE2 that RE2 refuses never matches.
 */

export const MAX_FILTER_KEYS = 20;
export const MAX_FILTER_STRING = 1000;
export const MAX_FILTER_REGEX = 200;
/**
 * Work units (characters looked at × RE2 program size): what one filter's worth of `$regex` work on the
 * event loop is. Values this short are matched by re2js there (lib/re2-cache.ts searchRegex: its
 * bit-state backtracker), whose costliest inputs took up to ~90 ns per unit on the 2-core build machine
 * (npm run bench:regex, and a random search over patterns) — Unicode classes under `(?i)`; ASCII patterns
 * stay under ~30 — so this many units cost at most ~4.5 ms, twice that while the machine is busy.
 */
export const REGEX_WORK_BUDGET = 50_000;

/** A `$regex` condition costing at most this many units is matched on the event loop; a costlier one on the matching thread. */
export const SYNC_REGEX_UNITS = REGEX_WORK_BUDGET;

export type FilterScalar = string | number | boolean | null;
export type FilterCondition = FilterScalar | { $contains: string } | { $regex: string };
export type EventFilter = Record<string, FilterCondition>;

/**
 * Dotted path segments of letters, digits, `_`, `$` and `-`; not starting with `$` (reserved for operators).
 * Written without a lookahead so that the OpenAPI document can carry it as a pattern that any JSON Schema
 * tool reads (eventFilterInputShape).
 */
export const FILTER_PATH = /^[A-Za-z0-9_-][A-Za-z0-9_$-]*(\.[A-Za-z0-9_$-]+)*$/;
const MAX_FILTER_PATH = 200;

const CONDITION_HELP = 'must be a string, number, boolean or null to compare with, or { "$contains": string } or { "$regex": string }';

/** The reason `condition` is refused and the path below its key it concerns, or null. */
function conditionProblem(condition: unknown): { path: string[]; message: string } | null {
  if (condition === null || typeof condition === 'boolean') return null;
  if (typeof condition === 'number') return Number.isFinite(condition) ? null : { path: [], message: 'must be a finite number' };
  if (typeof condition === 'string') {
    return condition.length <= MAX_FILTER_STRING ? null : { path: [], message: `must be at most ${MAX_FILTER_STRING} characters` };
  }
  if (typeof condition !== 'object' || Array.isArray(condition)) return { path: [], message: CONDITION_HELP };
  const keys = Object.keys(condition);
  if (keys.length !== 1 || (keys[0] !== '$contains' && keys[0] !== '$regex')) {
    return { path: [], message: `${CONDITION_HELP}, with exactly one operator` };
  }
  const operator = keys[0];
  const operand = (condition as Record<string, unknown>)[operator];
  if (typeof operand !== 'string') return { path: [operator], message: 'must be a string' };
  if (operator === '$contains') {
    return operand.length <= MAX_FILTER_STRING ? null : { path: [operator], message: `must be at most ${MAX_FILTER_STRING} characters` };
  }
  if (operand.length > MAX_FILTER_REGEX) return { path: [operator], message: `must be at most ${MAX_FILTER_REGEX} characters` };
  const compiled = compileRegex(operand);
  return compiled.ok ? null : { path: [operator], message: compiled.message };
}

/** Validates an eventFilter; issues name the key, e.g. `eventFilter.output.$regex: invalid or unsupported regular expression …`. */
export const eventFilterSchema = z
  .record(z.string(), z.unknown())
  .superRefine((filter, ctx) => {
    const keys = Object.keys(filter);
    if (keys.length > MAX_FILTER_KEYS) {
      ctx.addIssue({ code: 'custom', message: `must have at most ${MAX_FILTER_KEYS} keys` });
      return;
    }
    for (const key of keys) {
      if (key.length > MAX_FILTER_PATH || !FILTER_PATH.test(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'is not a valid path: dot-separated segments of letters, digits, _, $ or -, not starting with $',
        });
        continue;
      }
      const problem = conditionProblem(filter[key]);
      if (problem) ctx.addIssue({ code: 'custom', path: [key, ...problem.path], message: problem.message });
    }
  }) as unknown as z.ZodType<EventFilter, Record<string, unknown>>;

/**
 * What eventFilterSchema accepts, as far as JSON Schema can say it (for the OpenAPI document: the paths, the
 * number of keys, the conditions and their sizes). Beyond it, a `$regex` must compile in RE2.
 */
export const eventFilterInputShape = z
  .record(
    z.string().max(MAX_FILTER_PATH).regex(FILTER_PATH),
    z.union([
      z.string().max(MAX_FILTER_STRING),
      z.number(),
      z.boolean(),
      z.null(),
      z.strictObject({ $contains: z.string().max(MAX_FILTER_STRING) }),
      z.strictObject({ $regex: z.string().max(MAX_FILTER_REGEX) }),
    ]),
  )
  .meta({ maxProperties: MAX_FILTER_KEYS });

/** The response shape of an eventFilter (documentation; writes are checked by eventFilterSchema). */
export const eventFilterShape = z.record(
  z.string(),
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.object({ $contains: z.string() }),
    z.object({ $regex: z.string() }),
  ]),
);

interface Evaluation {
  /** Null: not evaluated (its account's share of the matching thread was spent). */
  matched: boolean | null;
  /** Characters × program size of the `$regex` conditions looked at. */
  units: number;
}

/** How one `$regex` condition is matched: on this thread, or (costly) handed to the matching thread. */
type RegexMatcher = (pattern: string, value: string, units: number) => boolean | Promise<boolean>;

const onThisThread: RegexMatcher = (pattern, value) => searchRegex(pattern, value);

/** The cost of a `$regex` condition on `value`: its length × the pattern's program size; 0 when it is not matched. */
function regexCost(pattern: string, value: unknown): number {
  if (typeof value !== 'string') return 0;
  const compiled = compileRegex(pattern);
  return compiled.ok ? value.length * compiled.programSize : 0;
}

/** The most `$regex` work evaluating `filter` on `data` may cost: every condition looked at in full. */
export function regexUnits(filter: EventFilter, data: unknown): number {
  let units = 0;
  for (const [path, condition] of Object.entries(filter)) {
    if (condition !== null && typeof condition === 'object' && '$regex' in condition) units += regexCost(condition.$regex, valueAtPath(data, path));
  }
  return units;
}

/**
 * What `condition` says of `value` without running a regex: true or false, or the regex to run and the text
 * it runs on (a string value and a pattern that compiles).
 */
function heldWithoutRegex(condition: FilterCondition, value: unknown): boolean | { pattern: string; text: string } {
  if (condition === null || typeof condition !== 'object') return value === condition;
  if (typeof value !== 'string') return false;
  if ('$contains' in condition) return value.includes(condition.$contains);
  return compileRegex(condition.$regex).ok ? { pattern: condition.$regex, text: value } : false;
}

async function evaluate(filter: EventFilter, data: unknown, match: RegexMatcher): Promise<Evaluation> {
  let units = 0;
  for (const [path, condition] of Object.entries(filter)) {
    const value = valueAtPath(data, path);
    let holds = heldWithoutRegex(condition, value);
    if (typeof holds === 'object') {
      const { pattern, text } = holds;
      const cost = regexCost(pattern, text);
      try {
        holds = await match(pattern, text, cost);
      } catch (err) {
        if (err instanceof FilterBudgetSpent) return { matched: null, units };
        throw err;
      }
      units += cost;
    }
    if (!holds) return { matched: false, units };
  }
  return { matched: true, units };
}

/** evaluate on this thread, synchronously. */
function evaluateHere(filter: EventFilter, data: unknown): Evaluation {
  let units = 0;
  for (const [path, condition] of Object.entries(filter)) {
    const value = valueAtPath(data, path);
    let holds = heldWithoutRegex(condition, value);
    if (typeof holds === 'object') {
      units += regexCost(holds.pattern, holds.text);
      holds = searchRegex(holds.pattern, holds.text);
    }
    if (!holds) return { matched: false, units };
  }
  return { matched: true, units };
}

/**
 * True when `data` (an event's `data`) meets every condition of `filter`, every value looked at in full,
 * on this thread. Pure but for the pattern cache; never throws; `filter` must have passed
 * eventFilterSchema. The engine matches through matchEventFilters, which keeps costly values off the
 * event loop.
 */
export function matchesEventFilter(filter: EventFilter, data: unknown): boolean {
  return evaluateHere(filter, data).matched === true;
}

export interface FilterCheck {
  filter: EventFilter;
  /** What the filter's paths start at: the event's `data`, or `data.output` for agent_output triggers. */
  data: unknown;
}

export interface FilterBudget {
  /**
   * Work units (as REGEX_WORK_BUDGET) all the checks together may spend: a filter is started only while
   * fewer have been spent, and once started is evaluated in full, so the checks spend at most this plus
   * one filter. Default: no limit.
   */
  maxUnits?: number;
  /** Yield to the event loop between checks once this many ms have passed since the last yield. Default 10. */
  sliceMs?: number;
  /**
   * The matching thread and the account whose turn its jobs wait for: conditions costing more than
   * SYNC_REGEX_UNITS are matched there. Without it every condition is matched on this thread (callers
   * keep the whole cost within a slice: engine/events/fan-out.ts INLINE_MATCH_UNITS).
   */
  thread?: { regex: RegexThread; accountId: string };
}

export interface FilterResults {
  /**
   * Per check, in order: whether its filter matched. Shorter than the checks when maxUnits ran out, or
   * the account's share of the matching thread was spent: the checks after it were not evaluated.
   */
  matches: boolean[];
  units: number;
}

/**
 * Evaluates the filters of one event's candidate triggers, in order, every value in full: conditions
 * costing more than SYNC_REGEX_UNITS on the matching thread (in the account's turn), the others here,
 * yielding to the event loop between filters once `sliceMs` have passed, so the event loop is held for
 * about one slice plus one cheap filter at a time (plus compiling its patterns if they are not cached).
 * Stops starting filters once `maxUnits` are spent, or when the matching thread refuses the account a
 * turn; the filters not evaluated are the ones past `matches.length`.
 */
export async function matchEventFilters(checks: readonly FilterCheck[], budget: FilterBudget = {}): Promise<FilterResults> {
  const { maxUnits = Infinity, sliceMs = 10, thread } = budget;
  const match: RegexMatcher = thread
    ? (pattern, value, units) => (units > SYNC_REGEX_UNITS ? thread.regex.match(thread.accountId, pattern, value) : searchRegex(pattern, value))
    : onThisThread;
  const matches: boolean[] = [];
  let units = 0;
  let sliceStart = performance.now();
  for (const [i, check] of checks.entries()) {
    if (units >= maxUnits) break;
    if (i > 0 && performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
    const result = await evaluate(check.filter, check.data, match);
    units += result.units;
    if (result.matched === null) break;
    matches.push(result.matched);
  }
  return { matches, units };
}
