import { RE2JS, RE2JSSyntaxException } from 're2js';

/**
 * Event filters' `$regex` patterns. Two engines, one syntax (RE2's):
 * - **re2js** (a pure-JavaScript port of RE2/J) decides what a pattern is — whether it compiles (the API
 *   refuses what it cannot compile, naming why) and its program size (refused above MAX_PROGRAM_SIZE; the
 *   cost of a match is bounded by value length × program size, lib/event-filter.ts) — and matches the
 *   values short enough to cost a few milliseconds at most, on the event loop (searchRegex). It is the
 *   stricter of the two: every pattern it accepts compiles in RE2 with the same meaning. Compiling costs
 *   0.01–1 ms.
 * - **RE2** itself (the `re2` package: Google's C++ library, built when the package is installed) matches
 *   the long values, on the matching thread only (lib/regex-thread.ts): its DFA runs at about a
 *   nanosecond per byte on most patterns, where re2js has none and costs 20–400 ns per character ×
 *   instruction (npm run bench:regex: a 1 MiB value is hundreds to thousands of times quicker for most
 *   hostile patterns; the ones that defeat its DFA are still linear, and a few times quicker). It is not
 *   used on the event loop because compiling a pattern with Unicode classes takes it up to ~100 ms.
 * re2js's compiled patterns are kept in a bounded LRU (the thread keeps its own): the same patterns are
 * matched against every event of their type. (Google's re2-wasm and AdGuard's fork were measured and
 * rejected: their 16 MiB heap aborts the process on a 1 MiB value, and they match 10–100 times slower
 * than RE2.)
 */

/**
 * Largest compiled program (re2js `programSize()`: about one instruction per literal, class,
 * alternative or repeat).
 */
export const MAX_PROGRAM_SIZE = 500;
/** Compiled patterns kept; the least recently used is dropped beyond it. */
export const REGEX_CACHE_SIZE = 500;

export type CompiledRegex = { ok: true; regex: RE2JS; programSize: number } | { ok: false; message: string };

const UNSUPPORTED = 'invalid or unsupported regular expression (RE2 syntax: no lookaround or backreferences)';

function compile(pattern: string): CompiledRegex {
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(pattern);
  } catch (err) {
    // "error parsing regexp: invalid escape sequence: `\1`" → "…: invalid escape sequence: `\1`"
    const reason = err instanceof RE2JSSyntaxException ? `${err.getDescription()}: \`${err.getPattern() ?? pattern}\`` : (err as Error).message;
    return { ok: false, message: `${UNSUPPORTED}: ${reason}` };
  }
  const programSize = regex.programSize();
  if (programSize > MAX_PROGRAM_SIZE) {
    return {
      ok: false,
      message: `compiles to ${programSize} RE2 instructions, more than ${MAX_PROGRAM_SIZE} (a counted repetition such as {300} repeats its operand); simplify it`,
    };
  }
  return { ok: true, regex, programSize };
}

const cache = new Map<string, CompiledRegex>();

/** The pattern compiled (from the cache when it is there), or why it is refused. Never throws. */
export function compileRegex(pattern: string): CompiledRegex {
  const cached = cache.get(pattern);
  if (cached) {
    // A Map iterates in insertion order: re-inserting makes this the most recently used.
    cache.delete(pattern);
    cache.set(pattern, cached);
    return cached;
  }
  const compiled = compile(pattern);
  cache.set(pattern, compiled);
  if (cache.size > REGEX_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return compiled;
}

/**
 * Whether `pattern` (accepted by compileRegex) matches somewhere in `value`, in full, by re2js on this
 * thread: callers keep it to values whose cost (length × program size) they bound (lib/event-filter.ts)
 * and send longer ones to the matching thread (lib/regex-thread.ts). Through a Matcher rather than
 * `test()`: test() runs re2js's lazy DFA, which on a crafted input builds a new state at every character
 * and keeps up to 8 MiB of states per pattern; find() answers with its one-pass matcher or, for short
 * inputs, its bit-state backtracker, keeping nothing between calls but a pooled bitmap.
 */
export function searchRegex(pattern: string, value: string): boolean {
  const compiled = compileRegex(pattern);
  return compiled.ok && compiled.regex.matcher(value).find();
}
