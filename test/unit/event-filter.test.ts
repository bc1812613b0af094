import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  eventFilterSchema,
  matchesEventFilter,
  matchEventFilters,
  regexUnits,
  SYNC_REGEX_UNITS,
  type EventFilter,
  type FilterCheck,
} from '../../lib/event-filter';
import { compileRegex, MAX_PROGRAM_SIZE, REGEX_CACHE_SIZE } from '../../lib/re2-cache';
import { createRegexThread, FilterBudgetSpent } from '../../lib/regex-thread';
import { parseWith } from '../../api/validation';

describe('matchesEventFilter', () => {
  const data = {
    agentId: 'a-1',
    runId: 'r-9',
    chainDepth: 2,
    ok: true,
    note: null,
    zero: 0,
    output: { status: 'done', text: 'Report ready: 3 items', items: [{ id: 'x' }, { id: 'y' }] },
    tags: ['alpha', 'beta'],
    'with-dash': 'dash',
  };
  const matches = (filter: EventFilter, on: unknown = data) => matchesEventFilter(filter, on);

  it('matches everything with an empty filter, even data that is not an object', () => {
    assert.equal(matches({}), true);
    assert.equal(matchesEventFilter({}, undefined), true);
    assert.equal(matchesEventFilter({}, 'text'), true);
  });

  it('compares scalars by type and value', () => {
    assert.equal(matches({ agentId: 'a-1' }), true);
    assert.equal(matches({ agentId: 'a-2' }), false);
    assert.equal(matches({ chainDepth: 2 }), true);
    assert.equal(matches({ chainDepth: 2.0 }), true);
    assert.equal(matches({ chainDepth: '2' }), false, 'no coercion from string to number');
    assert.equal(matches({ ok: true }), true);
    assert.equal(matches({ ok: false }), false);
    assert.equal(matches({ ok: 'true' }), false);
    assert.equal(matches({ zero: false }), false, 'no falsy equality');
    assert.equal(matches({ zero: 0 }), true);
    assert.equal(matches({ note: null }), true);
    assert.equal(matches({ note: 'null' }), false);
    assert.equal(matches({ 'with-dash': 'dash' }), true);
  });

  it('needs every condition to hold', () => {
    assert.equal(matches({ agentId: 'a-1', chainDepth: 2, ok: true }), true);
    assert.equal(matches({ agentId: 'a-1', chainDepth: 3 }), false);
  });

  it('follows dotted paths into objects and, with numeric segments, arrays', () => {
    assert.equal(matches({ 'output.status': 'done' }), true);
    assert.equal(matches({ 'output.status': 'failed' }), false);
    assert.equal(matches({ 'output.items.1.id': 'y' }), true);
    assert.equal(matches({ 'output.items.0.id': 'y' }), false);
    assert.equal(matches({ 'tags.0': 'alpha' }), true);
  });

  it('never matches a missing path, not even with null', () => {
    assert.equal(matches({ missing: null }), false);
    assert.equal(matches({ 'output.missing': null }), false);
    assert.equal(matches({ 'agentId.length': 3 }), false, 'no properties of strings');
    assert.equal(matches({ 'tags.length': 2 }), false, 'no properties of arrays');
    assert.equal(matches({ 'output.items.2.id': 'z' }), false, 'index out of range');
    assert.equal(matches({ 'output.items.01.id': 'y' }), false, 'not a canonical index');
    assert.equal(matches({ 'note.x': null }), false, 'through null');
    assert.equal(matches({ constructor: null }), false, 'no inherited properties');
    assert.equal(matchesEventFilter({ 'output.status': 'done' }, undefined), false);
    assert.equal(matchesEventFilter({ agentId: 'a-1' }, 'a-1'), false);
    assert.equal(matchesEventFilter({ note: null }, null), false);
  });

  it('$contains matches strings containing the text, and nothing else', () => {
    assert.equal(matches({ 'output.text': { $contains: 'ready' } }), true);
    assert.equal(matches({ 'output.text': { $contains: 'Ready' } }), false, 'case-sensitive');
    assert.equal(matches({ 'output.text': { $contains: '' } }), true);
    assert.equal(matches({ chainDepth: { $contains: '2' } }), false, 'not on a number');
    assert.equal(matches({ tags: { $contains: 'alpha' } }), false, 'not on an array');
    assert.equal(matches({ output: { $contains: 'done' } }), false, 'not on an object');
    assert.equal(matches({ note: { $contains: '' } }), false, 'not on null');
    assert.equal(matches({ missing: { $contains: '' } }), false);
  });

  it('$regex tests strings with the pattern, unanchored unless anchored', () => {
    assert.equal(matches({ 'output.text': { $regex: '\\d+ items$' } }), true);
    assert.equal(matches({ 'output.text': { $regex: '^ready' } }), false);
    assert.equal(matches({ runId: { $regex: '^r-[0-9]+$' } }), true);
    assert.equal(matches({ chainDepth: { $regex: '2' } }), false, 'not on a number');
    assert.equal(matches({ ok: { $regex: 'true' } }), false, 'not on a boolean');
  });

  it('filters an agent_output event on data.output through the "output" path', () => {
    const completed = { agentId: 'a-1', runId: 'r-1', output: 'All done', chainDepth: 0 };
    assert.equal(matches({ output: { $contains: 'done' } }, completed), true);
    assert.equal(matches({ output: 'All done', agentId: 'a-1' }, completed), true);
    assert.equal(matches({ output: { $regex: '^Failed' } }, completed), false);
  });
});

describe('eventFilterSchema', () => {
  const parse = (filter: unknown) => parseWith(eventFilterSchema, filter, 'body.configJson.eventFilter');
  const refused = (filter: unknown) => {
    try {
      parse(filter);
    } catch (err) {
      return (err as Error).message;
    }
    assert.fail(`accepted ${JSON.stringify(filter)}`);
  };

  it('accepts scalars and single operators', () => {
    const filter = { agentId: 'a', 'output.count': 3, ok: true, none: null, 'output.text': { $contains: 'x' }, runId: { $regex: '^r-\\d+$' }, a_b$: 1 };
    assert.deepEqual(parse(filter), filter);
    assert.deepEqual(parse({}), {});
  });

  it('names the key and the problem', () => {
    const cases: [unknown, RegExp][] = [
      [{ $where: 1 }, /eventFilter\.\$where: is not a valid path/],
      [{ 'a..b': 1 }, /eventFilter\.a\.\.b: is not a valid path/],
      [{ '.a': 1 }, /is not a valid path/],
      [{ 'a b': 1 }, /is not a valid path/],
      [{ a: [1] }, /eventFilter\.a: must be a string, number, boolean or null/],
      [{ a: {} }, /eventFilter\.a: .*exactly one operator/],
      [{ a: { $contains: 'x', $regex: 'y' } }, /exactly one operator/],
      [{ a: { $eq: 'x' } }, /exactly one operator/],
      [{ a: { nested: 1 } }, /exactly one operator/],
      [{ a: { $contains: 1 } }, /eventFilter\.a\.\$contains: must be a string/],
      [{ a: { $regex: '(' } }, /eventFilter\.a\.\$regex: invalid or unsupported regular expression \(RE2 syntax.*\): missing closing \): `\(`$/],
      [{ 'output.text': { $regex: '[z-a]' } }, /eventFilter\.output\.text\.\$regex: invalid or unsupported regular expression .*: invalid character class range: `z-a`$/],
      [{ a: { $regex: 'x'.repeat(201) } }, /\$regex: must be at most 200 characters/],
      [{ a: 'x'.repeat(1001) }, /eventFilter\.a: must be at most 1000 characters/],
      [Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])), /eventFilter: must have at most 20 keys/],
      [[], /eventFilter: /],
      ['x', /eventFilter: /],
    ];
    for (const [filter, message] of cases) assert.match(refused(filter), message, JSON.stringify(filter).slice(0, 60));
  });
});

describe('$regex (RE2)', () => {
  const parse = (filter: unknown) => parseWith(eventFilterSchema, filter, 'body.configJson.eventFilter');
  const refusal = (pattern: string) => {
    try {
      parse({ msg: { $regex: pattern } });
    } catch (err) {
      return (err as Error).message;
    }
    assert.fail(`accepted ${pattern}`);
  };
  const sizeOf = (pattern: string) => {
    const compiled = compileRegex(pattern);
    assert.ok(compiled.ok, pattern);
    return compiled.programSize;
  };

  it('accepts patterns that backtrack catastrophically in JavaScript, and matches them on bounded input', () => {
    const long = 'a'.repeat(100_000);
    const cases: [pattern: string, matching: string, notMatching: string][] = [
      ['.*.*.*!', 'aaa!', long],
      ['.*.*.*.*!', 'a!a', long],
      ['(a|a)*$', long, ''],
      ['(\\w|\\d)+$', '12ab', long.replace(/a/g, '!')],
      ['^(a+)+$', 'aaaa', 'aaaa!'],
      ['(x|x)*y|(.*)*z', 'xxy', long],
      ['(?i)(\\w*\\W*){30}$', long, ''],
    ];
    for (const [pattern, matching, notMatching] of cases) {
      assert.deepEqual(parse({ msg: { $regex: pattern } }), { msg: { $regex: pattern } });
      assert.equal(matchesEventFilter({ msg: { $regex: pattern } }, { msg: matching }), true, pattern);
      if (notMatching) assert.equal(matchesEventFilter({ msg: { $regex: pattern } }, { msg: notMatching }), false, pattern);
    }
  });

  it('refuses lookaround, backreferences and what else RE2 cannot compile, naming the field', () => {
    assert.equal(
      refusal('a(?=b)'),
      'body.configJson.eventFilter.msg.$regex: invalid or unsupported regular expression (RE2 syntax: no lookaround or backreferences): invalid or unsupported Perl syntax: `(?=`',
    );
    const unsupported = ['(?!a)b', '(?<=a)b', '(?<!a)b', '(a)\\1', '(?<n>a)\\k<n>', '(?>a)', 'a*+', '\\u00e9', '[^]', '\\Z'];
    for (const pattern of unsupported) {
      assert.match(refusal(pattern), /^body\.configJson\.eventFilter\.msg\.\$regex: invalid or unsupported regular expression \(RE2 syntax: no lookaround or backreferences\): .+/, pattern);
    }
    assert.match(refusal('(a)\\1'), /: invalid escape sequence: `\\1`$/);
  });

  it(`refuses a pattern compiling to more than ${MAX_PROGRAM_SIZE} instructions`, () => {
    assert.equal(sizeOf(`[a-z]{${MAX_PROGRAM_SIZE - 2}}`), MAX_PROGRAM_SIZE);
    parse({ msg: { $regex: `[a-z]{${MAX_PROGRAM_SIZE - 2}}` } });
    assert.equal(
      refusal(`[a-z]{${MAX_PROGRAM_SIZE - 1}}`),
      `body.configJson.eventFilter.msg.$regex: compiles to ${MAX_PROGRAM_SIZE + 1} RE2 instructions, more than ${MAX_PROGRAM_SIZE} (a counted repetition such as {300} repeats its operand); simplify it`,
    );
    assert.match(refusal('(x?){250}'), /compiles to \d+ RE2 instructions/);
  });

  it('has RE2 semantics: inline flags, code points, Unicode classes, ASCII \\s', () => {
    const holds = (pattern: string, value: string) => matchesEventFilter({ v: { $regex: pattern } }, { v: value });
    assert.equal(holds('(?i)^error', 'ERROR: disk full'), true);
    assert.equal(holds('^error', 'ERROR: disk full'), false);
    assert.equal(holds('^.$', '😀'), true, '. is a code point');
    assert.equal(holds('^\\pL+$', 'Ωmega'), true);
    assert.equal(holds('\\x{1F600}', 'ok 😀'), true);
    assert.equal(holds('^.$', '\n'), false);
    assert.equal(holds('(?s)^.$', '\n'), true);
    assert.equal(holds('^.$', '\r'), true, 'unlike JavaScript, . matches \\r');
    assert.equal(holds('\\s', '\u00a0'), false, '\\s is ASCII');
    assert.equal(holds('^\\d+$', '٣'), false, '\\d is ASCII');
    assert.equal(holds('(?m)^b$', 'a\nb\nc'), true);
  });

  it("matches every value in full, however long: `.*.*.*.*!` over 5,000 a then '!', and a 1 MiB value", () => {
    const holds = (pattern: string, value: string) => matchesEventFilter({ v: { $regex: pattern } }, { v: value });
    // Filters used to cut each value to 50 000 / (k × program size) characters: `.*.*.*.*!` (11
    // instructions) saw 4 545 of these 5 001 and never the '!'.
    assert.equal(holds('.*.*.*.*!', 'a'.repeat(5000) + '!'), true);
    assert.equal(holds('.*.*.*.*!', 'a'.repeat(5000)), false);
    const mib = 'a'.repeat(1024 * 1024 - 1);
    assert.equal(holds('b', mib + 'b'), true, 'the last character of 1 MiB');
    assert.equal(holds('^a+$', mib + 'b'), false, 'the value ends where it ends, not at a cut');
    assert.equal(holds('\\x{1F600}$', mib + '😀'), true, 'a code point at the very end');
    assert.equal(holds(`[a-z]{${MAX_PROGRAM_SIZE - 3}}!`, mib + '!'), true, 'the largest program on 1 MiB');
    // Every $regex of a filter sees its whole value too.
    assert.equal(matchesEventFilter({ u: { $regex: '!$' }, v: { $regex: '^a*!$' } }, { u: mib + '!', v: mib + '!' }), true);
  });

  it("counts a condition's cost as its whole value's length × program size", () => {
    assert.equal(regexUnits({ v: { $regex: 'b' } }, { v: 'a'.repeat(1000) }), 1000 * sizeOf('b'));
    assert.equal(regexUnits({ v: { $regex: 'b' }, u: { $contains: 'x' }, w: 1 }, { v: 'aa', u: 'x'.repeat(10_000), w: 1 }), 2 * sizeOf('b'));
    assert.equal(regexUnits({ v: { $regex: 'b' } }, { v: 42 }), 0, 'not a string: not matched');
    assert.equal(regexUnits({ v: { $regex: 'a(?=b)' } }, { v: 'ab' }), 0, 'a stored pattern RE2 refuses is not matched');
  });

  it('never matches (nor throws) with a stored pattern RE2 refuses', () => {
    assert.equal(matchesEventFilter({ v: { $regex: 'a(?=b)' } }, { v: 'ab' }), false);
    assert.equal(matchesEventFilter({ v: { $regex: 'x{1000}' } }, { v: 'x'.repeat(1000) }), false);
  });

  it('keeps compiled patterns in a bounded LRU', () => {
    const first = compileRegex('^lru-0$');
    assert.equal(compileRegex('^lru-0$'), first, 'cached');
    for (let i = 1; i < REGEX_CACHE_SIZE; i++) compileRegex(`^lru-a${i}$`);
    assert.equal(compileRegex('^lru-0$'), first, 'still cached, and now the most recently used');
    compileRegex('^lru-b$');
    assert.equal(compileRegex('^lru-0$'), first, 'the least recently used went instead');
    for (let i = 0; i < REGEX_CACHE_SIZE; i++) compileRegex(`^lru-c${i}$`);
    const again = compileRegex('^lru-0$');
    assert.notEqual(again, first, 'dropped once REGEX_CACHE_SIZE others were used since');
    assert.deepEqual(again, first);
  });
});

describe('matchEventFilters', () => {
  const costly: EventFilter = { v: { $regex: '(\\w|\\d)+!' } };
  const units = (value: string) => {
    const compiled = compileRegex('(\\w|\\d)+!');
    assert.ok(compiled.ok);
    return value.length * compiled.programSize;
  };

  it('answers each check in order and counts the work', async () => {
    const long = '1'.repeat(100_000);
    const checks: FilterCheck[] = [
      { filter: costly, data: { v: long } },
      { filter: { v: 'x' }, data: { v: 'x' } },
      { filter: costly, data: { v: 'ab!' } },
      { filter: {}, data: undefined },
      { filter: costly, data: { v: 42 } },
    ];
    const result = await matchEventFilters(checks);
    assert.deepEqual(result.matches, [false, true, true, true, false]);
    assert.equal(result.units, units(long) + units('ab!'));
  });

  it('stops once maxUnits are spent', async () => {
    const check: FilterCheck = { filter: costly, data: { v: '1'.repeat(100_000) } };
    const each = units('1'.repeat(100_000));
    const checks = [check, check, check, check];
    assert.deepEqual((await matchEventFilters(checks, { maxUnits: each })).matches, [false]);
    assert.deepEqual((await matchEventFilters(checks, { maxUnits: each + 1 })).matches, [false, false]);
    assert.equal((await matchEventFilters(checks, { maxUnits: 0 })).matches.length, 0);
    assert.equal((await matchEventFilters(checks)).matches.length, 4);
  });

  it('yields to the event loop between filters once a slice is over', async () => {
    const log: string[] = [];
    const probed = (i: number) => ({
      get v() {
        log.push(`check ${i}`);
        return 'x';
      },
    });
    const checks = [0, 1, 2].map((i) => ({ filter: { v: 'x' }, data: probed(i) }));
    setImmediate(() => log.push('turn'));
    const result = await matchEventFilters(checks, { sliceMs: 0 });
    assert.deepEqual(result.matches, [true, true, true]);
    assert.deepEqual(log.slice(0, 3), ['check 0', 'turn', 'check 1']);
  });
});

describe('matchEventFilters with the matching thread', () => {
  it('matches costly values in full on the thread while the event loop keeps turning; cheap ones here', async (t) => {
    const thread = createRegexThread();
    t.after(() => thread.close());
    // A DFA-defeating pattern on a long value: seconds of RE2 on one thread (npm run bench:regex).
    const hostile = { v: { $regex: 'a[ab]{60}c' } };
    const long = 'ab'.repeat(300_000) + 'a' + 'b'.repeat(60) + 'c';
    assert.ok(regexUnits(hostile, { v: long }) > SYNC_REGEX_UNITS);
    let turns = 0;
    let longest = 0;
    let probing = true;
    const probe = (async () => {
      let last = performance.now();
      while (probing) {
        await nextTurn();
        turns++;
        longest = Math.max(longest, performance.now() - last);
        last = performance.now();
      }
    })();
    const started = performance.now();
    const result = await matchEventFilters(
      [
        { filter: hostile, data: { v: long } },
        { filter: { v: { $regex: '^x' } }, data: { v: 'xy' } },
        { filter: hostile, data: { v: long.slice(0, -1) } },
      ],
      { thread: { regex: thread, accountId: 'a' } },
    );
    const tookMs = performance.now() - started;
    probing = false;
    await probe;
    console.log(`three filters (two on ${long.length} characters): ${tookMs.toFixed(0)} ms; event loop turned ${turns} times, held at most ${longest.toFixed(1)} ms`);
    assert.deepEqual(result.matches, [true, true, false]);
    assert.ok(turns > 10, `the event loop turned ${turns} times`);
  });

  it('stops at a filter the account may not have the thread for (its share of the minute spent): the ones after are unevaluated', async (t) => {
    const thread = createRegexThread({ msPerMinute: 0.001 });
    t.after(() => thread.close());
    const long = 'a'.repeat(200_000);
    const check = { filter: { v: { $regex: 'b' } }, data: { v: long } };
    const result = await matchEventFilters([check, { filter: { v: 'x' }, data: { v: 'x' } }, check, check], { thread: { regex: thread, accountId: 'greedy' } });
    assert.deepEqual(result.matches, [false, true], 'the first costly filter ran and spent the share; the next costly one was refused');
    await assert.rejects(thread.match('greedy', 'b', long), FilterBudgetSpent);
    assert.equal(await thread.match('other', 'b', long + 'b'), true, 'another account still has its share');
  });
});
