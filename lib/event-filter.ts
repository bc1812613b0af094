import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import { valueAtPath } from './json-path';
import { compileRegex, headOf, searchRegex } from './re2-cache';

/**
 * The `eventFilter` of event, agent_finished and agent_output triggers (README § Triggers, `eventFilter`).
 *
 * An object whose keys are dotted paths into the event's `data` and whose values are conditions; an
 * event matches when every condition holds (an empty filter matches every event of the type):
 * - a JSON scalar (string, number, boolean, null): the value at the path must be equal (same type);
 * - `{ "$contains": "text" }`: the value at the path is a string containing the text;
 * - `{ "$regex": "pattern" }`: the value at the path is a string the RE2 regular expression matches
 *   somewhere in its first characters (below).
 * A path that is missing never matches, not even `null`. A path segment that is a number indexes an
 * array (`items.0.id`).
 *
 * Paths start at `data`, except for agent_output triggers, which match on `data.output` (README § Triggers):
 * their paths start inside the run's output, e.g. `{ "tools.lookup.result.status": "ok" }`.
 *
 * `$regex` is RE2 (re2js, lib/re2-cache.ts), so matching takes time linear in the input whatever the
 * pattern (docs/architecture.md § Limits and fairness): no backreferences or lookaround, refused when written, as is a pattern that
 * compiles to more than MAX_PROGRAM_SIZE instructions. Linear is not free — the worst inputs cost time
 * per character times the size of the compiled program — so each `$regex` condition looks at no more
 * than `floor(REGEX_WORK_BUDGET / (k × programSize))` characters of its value, k being the number of
 * `$regex` conditions in the filter, as if the value ended there (`$` matches at that cut). One filter
 * thus spends at most REGEX_WORK_BUDGET units (characters × instructions) on `$regex`; equality and
 * `$contains` (String.includes) cost next to nothing beside it.
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
 * Work units (characters looked at × RE2 program size) one filter's `$regex` conditions may spend on
 * one event, split evenly among them. On the 2-core build machine (npm run bench:regex, and a random
 * search over patterns) the costliest inputs take up to ~90 ns per unit — Unicode classes under `(?i)`;
 * ASCII patterns stay under ~30 — so a filter costs at most ~4.5 ms, twice that or more while the
 * machine is busy: the ~10 ms a filter may cost at most. Every condition still looks at something:
 * 50 000 / (MAX_FILTER_KEYS × MAX_PROGRAM_SIZE) = 5 characters.
 */
export const REGEX_WORK_BUDGET = 50_000;

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

/** How many characters of a value a `$regex` condition looks at, in a filter with `regexConditions` of them. */
export function regexInputLimit(programSize: number, regexConditions: number): number {
  return Math.floor(REGEX_WORK_BUDGET / Math.max(1, regexConditions) / programSize);
}

interface Evaluation {
  matched: boolean;
  /** Characters × program size the `$regex` conditions looked at. */
  units: number;
}

function evaluate(filter: EventFilter, data: unknown): Evaluation {
  const conditions = Object.entries(filter);
  const regexConditions = conditions.filter(([, c]) => c !== null && typeof c === 'object' && '$regex' in c).length;
  let units = 0;
  for (const [path, condition] of conditions) {
    const value = valueAtPath(data, path);
    let holds: boolean;
    if (condition === null || typeof condition !== 'object') holds = value === condition;
    else if (typeof value !== 'string') holds = false;
    else if ('$contains' in condition) holds = value.includes(condition.$contains);
    else {
      const compiled = compileRegex(condition.$regex);
      if (compiled.ok) {
        const input = headOf(value, regexInputLimit(compiled.programSize, regexConditions));
        units += input.length * compiled.programSize;
        holds = searchRegex(compiled.regex, input);
      } else holds = false;
    }
    if (!holds) return { matched: false, units };
  }
  return { matched: true, units };
}

/**
 * True when `data` (an event's `data`) meets every condition of `filter`. Pure but for the pattern
 * cache; never throws; `filter` must have passed eventFilterSchema.
 */
export function matchesEventFilter(filter: EventFilter, data: unknown): boolean {
  return evaluate(filter, data).matched;
}

export interface FilterCheck {
  filter: EventFilter;
  /** What the filter's paths start at: the event's `data`, or `data.output` for agent_output triggers. */
  data: unknown;
}

export interface FilterBudget {
  /**
   * Work units (as REGEX_WORK_BUDGET) all the checks together may spend; once they are spent, the
   * remaining checks are not evaluated. Overshoots by at most one filter's REGEX_WORK_BUDGET. Default:
   * no limit.
   */
  maxUnits?: number;
  /** Yield to the event loop between checks once this many ms have passed since the last yield. Default 10. */
  sliceMs?: number;
}

export interface FilterResults {
  /** Per check, in order: whether its filter matched; shorter than the checks when maxUnits ran out. */
  matches: boolean[];
  units: number;
}

/**
 * Evaluates the filters of one event's candidate triggers, in order, yielding to the event loop between
 * filters once `sliceMs` have passed, so an event with hundreds of costly filters holds the worker's
 * event loop for about one slice plus one filter (plus compiling its patterns if they are not cached)
 * at a time; and stopping after `maxUnits`, so one event's fan-out costs a bounded amount of work.
 */
export async function matchEventFilters(checks: readonly FilterCheck[], budget: FilterBudget = {}): Promise<FilterResults> {
  const { maxUnits = Infinity, sliceMs = 10 } = budget;
  const matches: boolean[] = [];
  let units = 0;
  let sliceStart = performance.now();
  for (const [i, check] of checks.entries()) {
    if (units >= maxUnits) break;
    if (i > 0 && performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
    const result = evaluate(check.filter, check.data);
    matches.push(result.matched);
    units += result.units;
  }
  return { matches, units };
}
