/**
 * `npm run bench:regex`: what an event filter's `$regex` costs when it matches its whole value, up to the
 * 1 MiB a hook accepts, and what the engines on offer would cost.
 *
 * For each hostile pattern, a value crafted against it (BENCH_VALUE_KIB long, default 1024; its earliest
 * match, if any, at the very end, so the whole value is searched):
 * - RE2 (the `re2` package, what the matching thread matches long values with): ms of matching the whole
 *   value on one thread, min / median of BENCH_ROUNDS (default 5), and ns per unit (character × re2js
 *   program size);
 * - re2js (what the engine matched every value with before, and still checks patterns and matches short
 *   values with): its ns per unit on a BENCH_RE2JS_KIB (default 32) value crafted the same way, and the ms
 *   that makes for the whole value — re2js has no resumable match, so "re2js with time slicing" would
 *   hold the event loop for that whole time in one slice (or a thread for it);
 * - compiling the pattern (both engines; once per pattern per process: the caches).
 * Then one event fanned out to 20 filters of the costliest patterns on whole values through
 * matchEventFilters with the matching thread, with the longest the event loop went without a turn, and
 * the wait of another account's cheap job on the thread while a flooding account's jobs are queued.
 * (The WebAssembly builds, re2-wasm and @adguard/re2-wasm, were measured beside these once and are not
 * dependencies: see the README's Benchmarks.)
 */
import { performance } from 'node:perf_hooks';
import RE2 from 're2';
import { RE2JS } from 're2js';
import { matchEventFilters, type EventFilter, type FilterCheck } from '../lib/event-filter';
import { FANOUT_WORK_UNITS } from '../engine/events/fan-out';
import { compileRegex } from '../lib/re2-cache';
import { createRegexThread } from '../lib/regex-thread';

const VALUE_LENGTH = Number(process.env.BENCH_VALUE_KIB ?? 1024) * 1024;
const RE2JS_LENGTH = Number(process.env.BENCH_RE2JS_KIB ?? 32) * 1024;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

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
 * end, so the whole value is searched (and the literals a prefilter looks for are present).
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
  [`[a-z]{498}`, (n) => noise(n - 1, 'aA') + '!'],
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
const show = (t: { min: number; median: number }) => `${t.min.toFixed(1)} / ${t.median.toFixed(1)}`;
const pad = (s: string | number, n: number) => String(s).padStart(n);

/**
 * Runs `work` while probing the event loop: how long it took, the longest the loop went without a turn
 * (which includes the OS not scheduling this thread on a shared machine), and the event loop's
 * utilisation (the share of the time it was running code rather than waiting: what this thread itself did).
 */
async function probed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; longestHold: number; busy: number }> {
  const elu = performance.eventLoopUtilization();
  let longestHold = 0;
  let probing = true;
  // A 1 ms timer rather than setImmediate, so the loop may idle between probes (and its utilisation says
  // what the work did); a turn late by more than its timer is a hold.
  const probe = (async () => {
    let last = performance.now();
    while (probing) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const now = performance.now();
      longestHold = Math.max(longestHold, now - last - 1);
      last = now;
    }
  })();
  const start = performance.now();
  const result = await work();
  const ms = performance.now() - start;
  probing = false;
  await probe;
  return { result, ms, longestHold, busy: performance.eventLoopUtilization(elu).utilization };
}

async function main() {
  const cases = CASES.map(([pattern, make]) => {
    const compiled = compileRegex(pattern);
    if (!compiled.ok) throw new Error(`${pattern}: ${compiled.message}`);
    return { pattern, make, programSize: compiled.programSize, value: make(VALUE_LENGTH) };
  });
  // Warm both engines' code paths so no case is charged for the JIT.
  const natives = new Map(cases.map((c) => [c.pattern, new RE2(c.pattern, 'u')]));
  for (const c of cases) {
    natives.get(c.pattern)!.test(c.make(2000));
    RE2JS.compile(c.pattern).matcher(c.make(2000)).find();
  }

  console.log(
    `one condition on a whole value of ${VALUE_LENGTH / 1024} KiB; RE2 ms min / median of ${ROUNDS}; re2js measured on ${RE2JS_LENGTH / 1024} KiB ` +
      `and scaled; units = characters × re2js program size`,
  );
  console.log(
    `${'pattern'.padEnd(42)} ${pad('size', 4)} ${pad('RE2 ms', 15)} ${pad('ns/unit', 7)} ${pad('re2js ns/unit', 13)} ${pad('re2js ms (scaled)', 17)} ${pad('compile ms RE2 / re2js', 22)}`,
  );
  const costs: { pattern: string; make: (n: number) => string; programSize: number; value: string; ms: number }[] = [];
  for (const c of cases) {
    const native = natives.get(c.pattern)!;
    const re2 = timed(ROUNDS, () => {}, () => native.test(c.value));
    const small = c.make(RE2JS_LENGTH);
    const js = timed(Math.max(1, Math.min(ROUNDS, 3)), () => {}, () => RE2JS.compile(c.pattern).matcher(small).find());
    const jsNsPerUnit = (js.min * 1e6) / (RE2JS_LENGTH * c.programSize);
    const compileRe2 = timed(ROUNDS, () => {}, () => new RE2(c.pattern, 'u'));
    const compileJs = timed(ROUNDS, () => {}, () => RE2JS.compile(c.pattern));
    costs.push({ ...c, ms: re2.min });
    console.log(
      `${c.pattern.padEnd(42)} ${pad(c.programSize, 4)} ${pad(show(re2), 15)} ${pad(((re2.min * 1e6) / (VALUE_LENGTH * c.programSize)).toFixed(2), 7)} ` +
        `${pad(jsNsPerUnit.toFixed(1), 13)} ${pad(((jsNsPerUnit * VALUE_LENGTH * c.programSize) / 1e6).toFixed(0), 17)} ` +
        `${pad(`${compileRe2.min.toFixed(2)} / ${compileJs.min.toFixed(2)}`, 22)}`,
    );
  }
  const costliest = [...costs].sort((a, b) => b.ms - a.ms);
  console.log(`costliest with RE2: ${costliest[0]!.ms.toFixed(0)} ms (${costliest[0]!.pattern}); FANOUT_WORK_UNITS per event: ${FANOUT_WORK_UNITS}`);

  // The machine's own noise: the longest the event loop goes without a turn while this process does
  // nothing (other processes on a shared machine take the cores too).
  const idle = await probed(() => new Promise((resolve) => setTimeout(resolve, 3000)));
  console.log(`idle for 3 s: the event loop went at most ${idle.longestHold.toFixed(1)} ms without a turn (the machine's noise), busy ${(idle.busy * 100).toFixed(1)}%`);

  // One event, 20 filters of the costliest patterns on their whole values, through the fan-out's matching
  // (the matching thread for every costly condition): the event loop keeps turning.
  const thread = createRegexThread({ msPerMinute: Infinity });
  await thread.match('bench', 'warm', 'up'); // the thread started (once per process) before the probe
  const checks: FilterCheck[] = costliest.slice(0, 20).map((c) => ({ filter: { v: { $regex: c.pattern } } as EventFilter, data: { v: c.value } }));
  const fan = await probed(() => matchEventFilters(checks, { thread: { regex: thread, accountId: 'bench' } }));
  console.log(
    `fan-out of ${checks.length} filters on whole ${VALUE_LENGTH / 1024} KiB values (the costliest patterns), matching thread: ` +
      `${fan.ms.toFixed(0)} ms wall, ${fan.result.units} units, event loop went at most ${fan.longestHold.toFixed(1)} ms without a turn, busy ${(fan.busy * 100).toFixed(1)}%`,
  );

  // Fairness on the thread: a flooding account queues 10 of the costliest jobs; another account's cheap
  // job, asked for just after, waits for at most the one in flight.
  const flood = costliest[0]!;
  const floodJobs = Array.from({ length: 10 }, () => thread.match('flood', flood.pattern, flood.value));
  const asked = performance.now();
  await thread.match('quiet', 'ok$', 'it is ok');
  const quietWait = performance.now() - asked;
  const floodStart = performance.now();
  await Promise.all(floodJobs);
  console.log(
    `another account's cheap job behind 10 queued jobs of the costliest pattern: answered in ${quietWait.toFixed(0)} ms ` +
      `(one such job: ~${flood.ms.toFixed(0)} ms; the flood finished ${(performance.now() - floodStart).toFixed(0)} ms later)`,
  );
  await thread.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
