/**
 * `npm run bench:regex`: what one event filter's `$regex` costs at worst. The engine promises ~10 ms per
 * filter; lib/event-filter.ts keeps to it by looking at no more than REGEX_WORK_BUDGET / (k × program
 * size) characters of a value.
 *
 * For each hostile pattern, with a value crafted against it (BENCH_VALUE_KIB long, default 256: a run's
 * stored output is at most 256 KiB; the crafted part is what the filter looks at, its earliest match at
 * the end of it), one filter `{ v: { $regex } }`: the characters looked at; the ms of matching, the
 * pattern freshly compiled each of BENCH_ROUNDS (default 7) rounds; the ns per unit (character ×
 * instruction); the ms of compiling (paid once per pattern per process: the cache); and the baseline,
 * `String.includes` of an absent needle over the whole value, what `$contains` costs. Then a 20-key
 * filter whose every condition holds at the end of what it looks at (the worst a filter can be), and
 * one event fanned out to 100 filters through matchEventFilters, with the longest the event loop went
 * without a turn.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { MAX_FILTER_KEYS, matchesEventFilter, matchEventFilters, regexInputLimit, REGEX_WORK_BUDGET, type EventFilter, type FilterCheck } from '../lib/event-filter';
import { clearRegexCache, compileRegex, searchRegex } from '../lib/re2-cache';

const VALUE_LENGTH = Number(process.env.BENCH_VALUE_KIB ?? 256) * 1024;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

/** Deterministic pseudo-random text over `alphabet` (code points). */
function noise(length: number, alphabet: string, seed = 7): string {
  const chars = [...alphabet];
  let x = seed;
  let out = '';
  while (out.length < length) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out += chars[(x >> 8) % chars.length];
  }
  return out.slice(0, length);
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyzéλжשب漢字ñøßÆ';
/**
 * A pattern and a value of n characters crafted against it: the earliest match, if any, is at the very
 * end, so the whole value is searched (and the literals re2js's prefilter looks for are present).
 */
const CASES: [pattern: string, value: (n: number) => string][] = [
  ['.*.*.*!', (n) => 'a'.repeat(n - 1) + '!'],
  ['.*.*.*.*!', (n) => 'a'.repeat(n - 1) + '!'],
  ['(a|a)*$', (n) => 'a'.repeat(n)],
  ['(\\w|\\d)+$', (n) => '1'.repeat(n)],
  ['^(a+)+$', (n) => 'a'.repeat(n)],
  ['(x|x)*y|(.*)*z', (n) => 'x'.repeat(n - 1) + 'y'],
  ['(?i)(\\w*\\W*){30}$', (n) => noise(n, 'a b!')],
  ['(.*a){20}z', (n) => noise(n - 1, 'ab') + 'z'],
  ['a[ab]{20}c', (n) => noise(n - 1, 'ab') + 'c'],
  ['a[ab]{60}c', (n) => noise(n - 1, 'ab') + 'c'],
  ['(?i)a[a-z]{100}!', (n) => noise(n - 1, 'aAbB') + '!'],
  ['(?i)\\pL[\\pL\\pN\\pM]{12}!', (n) => noise(n - 1, LETTERS) + '!'],
  ['\\pL[\\pL\\pN]{40}!', (n) => noise(n - 1, LETTERS) + '!'],
  ['(x?){99}x{99}y', (n) => 'x'.repeat(n - 1) + 'y'],
  ['(?s).{0,80}a.{0,80}b.{0,80}$', (n) => noise(n, 'ab\n')],
  ['[ab]{0,120}c[ab]{0,120}d', (n) => noise(n - 2, 'ab') + 'cd'],
  ['(?i)(\\pL|\\pN|\\pP|\\pS){0,100}\\x{1F600}', (n) => noise(n - 2, LETTERS + '1!') + '\u{1F600}'],
  ['(?i)[\\pL\\pN\\pM\\pP\\pS\\pZ]{2,90}\\x{1F600}', (n) => noise(n - 2, LETTERS) + '\u{1F600}'],
  ['(?i)(?:ǅ|ß|ſ|k|K|ω|Ω){1,150}!', (n) => noise(n - 1, 'ǅßſkKωΩ') + '!'],
  ['(\\pL+\\pN+)+!', (n) => noise(n - 1, LETTERS + '123') + '!'],
  ['a*(?i:[\\pL\\pN\\pM\\pP\\pS]){1,40}([^a]){5}$', (n) => noise(n, 'ΑΒΓабв漢字')],
  ['\\pL?$', (n) => noise(n, 'a b!')],
  ['\\b(\\w+\\s+){0,60}\\d', (n) => noise(n - 1, 'ab ') + '1'],
];

/**
 * Milliseconds of `work`, min and median over `rounds` runs (each after `prepare`). The machine is
 * shared: other processes only ever add to a run, so the minimum is what the work itself costs and the
 * median what it cost under the load of the moment.
 */
function timed(rounds: number, prepare: () => void, work: () => unknown): { min: number; median: number } {
  const runs: number[] = [];
  for (let round = 0; round < rounds; round++) {
    prepare();
    const start = performance.now();
    work();
    runs.push(performance.now() - start);
  }
  runs.sort((a, b) => a - b);
  return { min: runs[0]!, median: runs[Math.floor(runs.length / 2)]! };
}
const show = (t: { min: number; median: number }) => `${t.min.toFixed(2)} / ${t.median.toFixed(2)}`;
const pad = (s: string | number, n: number) => String(s).padStart(n);

/** `{ v: { $regex: pattern } }`, after `others` trivial $regex conditions that hold, so v gets 1/(others+1) of the budget. */
function filterWith(pattern: string, value: string, others: number): { filter: EventFilter; data: Record<string, string> } {
  const filter: EventFilter = {};
  const data: Record<string, string> = {};
  for (let i = 0; i < others; i++) {
    filter[`t${i}`] = { $regex: 'x' };
    data[`t${i}`] = 'x';
  }
  filter.v = { $regex: pattern };
  data.v = value;
  return { filter, data };
}

/** The value for `pattern` crafted for the characters its condition looks at, then filler to VALUE_LENGTH. */
function valueFor(make: (n: number) => string, programSize: number, regexConditions: number): string {
  const crafted = make(Math.min(VALUE_LENGTH, regexInputLimit(programSize, regexConditions)));
  return crafted + '.'.repeat(VALUE_LENGTH - crafted.length);
}

/** Compiling (into an empty cache), then matching once with the freshly compiled pattern. */
function measure(pattern: string, value: string, others: number) {
  const { filter, data } = filterWith(pattern, value, others);
  const compile = timed(ROUNDS, clearRegexCache, () => [compileRegex(pattern), compileRegex('x')]);
  const match = timed(
    ROUNDS,
    () => {
      clearRegexCache();
      compileRegex(pattern);
      compileRegex('x');
    },
    () => matchesEventFilter(filter, data),
  );
  return { compile, match };
}

async function main() {
  const cases = CASES.map(([pattern, make]) => {
    const compiled = compileRegex(pattern);
    if (!compiled.ok) throw new Error(`${pattern}: ${compiled.message}`);
    return { pattern, make, programSize: compiled.programSize };
  });
  // Warm the JIT on re2js's engines (one-pass, backtracker, prefilter) so no case is charged for it.
  for (let i = 0; i < 5; i++) for (const c of cases) measure(c.pattern, c.make(500), 0);

  console.log(`one filter { v: { $regex } }; value ${VALUE_LENGTH / 1024} KiB; ms: min / median of ${ROUNDS}; REGEX_WORK_BUDGET ${REGEX_WORK_BUDGET} units (chars × size)`);
  console.log(`${'pattern'.padEnd(42)} ${pad('size', 4)} ${pad('chars', 5)} ${pad('match ms', 13)} ${pad('ns/unit', 7)} ${pad('compile ms', 13)} ${pad('includes ms', 15)}`);
  const costs: { pattern: string; make: (n: number) => string; programSize: number; match: number }[] = [];
  for (const c of cases) {
    const value = valueFor(c.make, c.programSize, 1);
    const chars = Math.min(value.length, regexInputLimit(c.programSize, 1));
    const { compile, match } = measure(c.pattern, value, 0);
    const includes = timed(ROUNDS, () => {}, () => value.includes('\u0000absent needle'));
    costs.push({ ...c, match: match.min });
    const nsPerUnit = (match.min * 1e6) / (chars * c.programSize);
    console.log(
      `${c.pattern.padEnd(42)} ${pad(c.programSize, 4)} ${pad(chars, 5)} ${pad(show(match), 13)} ${pad(nsPerUnit.toFixed(0), 7)} ${pad(show(compile), 13)} ${pad(show(includes), 15)}`,
    );
  }
  const costliest = [...costs].sort((a, b) => b.match - a.match);
  console.log(`costliest one-condition filter: ${costliest[0]!.match.toFixed(2)} ms (${costliest[0]!.pattern})`);

  // 20 keys: conditions are evaluated in order until one fails, so the worst filter is one whose every
  // condition holds right at the end of what it looks at (a twentieth of the budget each). Built from
  // the costliest patterns whose crafted values do hold at that length, each repeated pattern made
  // distinct with non-capturing groups (the same program in its own cache entry).
  const holding = costliest.filter((c) => {
    const compiled = compileRegex(c.pattern);
    return compiled.ok && searchRegex(compiled.regex, c.make(regexInputLimit(c.programSize, MAX_FILTER_KEYS)));
  });
  const wideFilter: EventFilter = {};
  const wideData: Record<string, string> = {};
  for (let i = 0; i < MAX_FILTER_KEYS; i++) {
    const pick = holding[i % holding.length]!;
    const depth = Math.floor(i / holding.length);
    wideFilter[`k${i}`] = { $regex: '(?:'.repeat(depth) + pick.pattern + ')'.repeat(depth) };
    wideData[`k${i}`] = valueFor(pick.make, pick.programSize, MAX_FILTER_KEYS);
  }
  const wide = timed(
    ROUNDS,
    () => {
      clearRegexCache();
      for (const condition of Object.values(wideFilter)) compileRegex((condition as { $regex: string }).$regex);
    },
    () => {
      if (!matchesEventFilter(wideFilter, wideData)) throw new Error(`the ${MAX_FILTER_KEYS}-key filter should hold`);
    },
  );
  console.log(`${MAX_FILTER_KEYS}-key filter, every condition holding at its limit (${Math.min(holding.length, MAX_FILTER_KEYS)} of the patterns): ${show(wide)} ms`);

  // A fan-out: one event checked against 100 one-condition filters through matchEventFilters, each a
  // distinct variant of the costliest patterns; the event loop is probed with setImmediate.
  const values = costliest.slice(0, 10).map((pick) => valueFor(pick.make, pick.programSize, 1));
  const checks = Array.from({ length: 100 }, (_, i) => {
    const depth = Math.floor(i / 10);
    return filterWith('(?:'.repeat(depth) + costliest[i % 10]!.pattern + ')'.repeat(depth), values[i % 10]!, 0);
  });
  for (const cache of ['cold', 'warm'] as const) {
    clearRegexCache();
    if (cache === 'warm') for (const { filter } of checks) compileRegex((filter.v as { $regex: string }).$regex);
    const { total, units, longestHold } = await fanOut(checks);
    console.log(
      `fan-out of 100 filters (10 costliest patterns × 10 variants), ${cache} cache${cache === 'cold' ? ' (compiling each)' : ''}: ` +
        `${total.toFixed(0)} ms wall in all (${units} units), event loop held at most ${longestHold.toFixed(1)} ms`,
    );
  }
}

async function fanOut(checks: FilterCheck[]) {
  let longestHold = 0;
  let probing = true;
  const probe = (async () => {
    let last = performance.now();
    while (probing) {
      await nextTurn();
      const now = performance.now();
      longestHold = Math.max(longestHold, now - last);
      last = now;
    }
  })();
  const start = performance.now();
  const { units } = await matchEventFilters(checks);
  const total = performance.now() - start;
  probing = false;
  await probe;
  return { total, units, longestHold };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
