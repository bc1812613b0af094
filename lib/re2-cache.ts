import RE2 from 're2';
import { RE2JS, RE2JSSyntaxException } from 're2js';

/**
 * Event filters' `$regex` patterns. Two engines, one syntax (RE2's):
 * - **re2js** (a pure-JavaScript port of RE2/J) decides what a pattern is: whether it compiles (the API
 *   refuses what it cannot compile, naming why) and its program size (refused above MAX_PROGRAM_SIZE; the
 *   cost of a match is bounded by value length × program size, lib/event-filter.ts). It is the stricter
 *   of the two: every pattern it accepts compiles in RE2 with the same meaning.
 * - **RE2** itself (the `re2` package: Google's C++ library, built when the package is installed) matches:
 *   its DFA runs at about a nanosecond per byte on most patterns, where re2js has none and costs
 *   30–90 ns per character × instruction (npm run bench:regex: a 1 MiB value is 2–3,000 times quicker for
 *   most hostile patterns; the ones that defeat its DFA are still linear and 1–3 times quicker).
 * Both are kept compiled in bounded LRUs: compiling costs 0.01–1 ms, often more than matching, and the same
 * patterns are matched against every event of their type. (Google's re2-wasm and AdGuard's fork were
 * measured and rejected: their 16 MiB heap aborts the process on a 1 MiB value, and their matching is
 * 10–100 times slower than RE2's.)
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

const natives = new Map<string, RE2>();

/** Empties the caches (the benchmark measures cold patterns). */
export function clearRegexCache(): void {
  cache.clear();
  natives.clear();
}

/**
 * `pattern` compiled by RE2 (the `u` flag: code points, as re2js; no other flag: `(?i)`, `(?s)` and `(?m)`
 * are written inline), from its LRU. Throws for a pattern RE2 refuses: callers match only patterns
 * compileRegex accepted.
 */
export function nativeRegex(pattern: string): RE2 {
  let regex = natives.get(pattern);
  if (regex) {
    natives.delete(pattern);
  } else {
    regex = new RE2(pattern, 'u');
    if (natives.size >= REGEX_CACHE_SIZE) natives.delete(natives.keys().next().value as string);
  }
  natives.set(pattern, regex);
  return regex;
}

/**
 * Whether `pattern` (accepted by compileRegex) matches somewhere in `value`, in full, by RE2 on this
 * thread: callers keep it to values whose cost (length × program size) they bound (lib/event-filter.ts),
 * and send longer ones to the matching thread (lib/regex-thread.ts).
 */
export function searchRegex(pattern: string, value: string): boolean {
  return nativeRegex(pattern).test(value);
}
