import { RE2JS, RE2JSSyntaxException } from 're2js';

/**
 * Event filters' `$regex` patterns compiled with re2js (a pure-JavaScript port of RE2/J), kept in a
 * bounded LRU: compiling costs 0.01–1 ms (more on a cold or busy process), often more than matching,
 * and the same patterns are matched against every event of their type.
 *
 * RE2 matches in time linear in the input, but the constant is the size of the compiled program: the
 * worst inputs cost up to ~90 ns per character per instruction (npm run bench:regex), so callers bound
 * the input by the program size (lib/event-filter.ts) and patterns above MAX_PROGRAM_SIZE instructions
 * are refused. (Google's re2-wasm was measured and rejected: every compiled pattern leaks
 * wasm memory and its 16 MiB heap aborts the process after ~100k compiles.)
 */

/**
 * Largest compiled program (re2js `programSize()`: about one instruction per literal, class,
 * alternative or repeat). Also the largest re2js runs its bit-state backtracker on (see searchRegex).
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

/** Empties the cache (the benchmark measures cold patterns). */
export function clearRegexCache(): void {
  cache.clear();
}

/**
 * Whether `regex` matches somewhere in `input`. Through a Matcher rather than `regex.test()`: test()
 * runs re2js's lazy DFA, which on a crafted input builds a new state at every character, each costing
 * time per instruction it holds — 2 to 10 times the backtracker's cost on the same inputs in the
 * benchmark — and keeps up to 8 MiB of states per pattern in the cache (~3 MiB of heap seen). find()
 * asks for the match's position, which re2js answers with its one-pass matcher or, for inputs as short
 * as callers make them (≤ 262,144 / program size characters), its bit-state backtracker: each
 * (instruction, position) pair visited at most once, nothing kept between calls but a pooled bitmap.
 */
export function searchRegex(regex: RE2JS, input: string): boolean {
  return regex.matcher(input).find();
}

/** The first `maxChars` UTF-16 code units of `value`, one fewer rather than half a surrogate pair. */
export function headOf(value: string, maxChars: number): string {
  if (value.length <= maxChars) return value;
  const last = value.charCodeAt(maxChars - 1);
  return value.slice(0, last >= 0xd800 && last <= 0xdbff ? maxChars - 1 : maxChars);
}
