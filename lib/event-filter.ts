import safeRegex from 'safe-regex2';
import { z } from 'zod';
import { valueAtPath } from './json-path';

/**
 * The `eventFilter` of event, agent_finished and agent_output triggers (DESIGN §4 Triggers).
 *
 * An object whose keys are dotted paths into the event's `data` and whose values are conditions; an
 * event matches when every condition holds (an empty filter matches every event of the type):
 * - a JSON scalar (string, number, boolean, null): the value at the path must be equal (same type);
 * - `{ "$contains": "text" }`: the value at the path is a string containing the text;
 * - `{ "$regex": "pattern" }`: the value at the path is a string the JavaScript regular expression
 *   (no flags) matches somewhere.
 * A path that is missing never matches, not even `null`. A path segment that is a number indexes an
 * array (`items.0.id`).
 *
 * Paths start at `data`, except for agent_output triggers, which match on `data.output` (DESIGN §4):
 * their paths start inside the run's output, e.g. `{ "tools.lookup.result.status": "ok" }`.
 */

export const MAX_FILTER_KEYS = 20;
export const MAX_FILTER_STRING = 1000;
export const MAX_FILTER_REGEX = 200;
/** $regex looks at no more than this many characters of a value. */
export const MAX_MATCHED_LENGTH = 100_000;

export type FilterScalar = string | number | boolean | null;
export type FilterCondition = FilterScalar | { $contains: string } | { $regex: string };
export type EventFilter = Record<string, FilterCondition>;

/** Dotted path segments of letters, digits, `_`, `$` and `-`; not starting with `$` (reserved for operators). */
export const FILTER_PATH = /^(?!\$)[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

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
  try {
    new RegExp(operand);
  } catch (err) {
    return { path: [operator], message: (err as Error).message };
  }
  // A pattern with nested quantifiers, e.g. ^(a+)+$, can take exponential time on a crafted value and
  // would stall whatever evaluates filters: refused when written.
  if (!safeRegex(operand)) return { path: [operator], message: 'may backtrack catastrophically (nested quantifiers); simplify it' };
  return null;
}

/** Validates an eventFilter; issues name the key, e.g. `eventFilter.output.$regex: Invalid regular expression: …`. */
export const eventFilterSchema = z
  .record(z.string(), z.unknown())
  .superRefine((filter, ctx) => {
    const keys = Object.keys(filter);
    if (keys.length > MAX_FILTER_KEYS) {
      ctx.addIssue({ code: 'custom', message: `must have at most ${MAX_FILTER_KEYS} keys` });
      return;
    }
    for (const key of keys) {
      if (key.length > 200 || !FILTER_PATH.test(key)) {
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

function holds(condition: FilterCondition, value: unknown): boolean {
  if (condition === null || typeof condition !== 'object') return value === condition;
  if (typeof value !== 'string') return false;
  if ('$contains' in condition) return value.includes(condition.$contains);
  // Bounded input as a second guard: even a linear pattern costs time per character.
  return new RegExp(condition.$regex).test(value.length > MAX_MATCHED_LENGTH ? value.slice(0, MAX_MATCHED_LENGTH) : value);
}

/**
 * True when `data` (an event's `data`) meets every condition of `filter`. Pure; `filter` must have
 * passed eventFilterSchema.
 */
export function matchesEventFilter(filter: EventFilter, data: unknown): boolean {
  for (const [path, condition] of Object.entries(filter)) {
    const value = valueAtPath(data, path);
    if (value === undefined || !holds(condition, value)) return false;
  }
  return true;
}
