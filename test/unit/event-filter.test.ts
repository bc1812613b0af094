import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventFilterSchema, matchesEventFilter, type EventFilter } from '../../lib/event-filter';
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
      [{ a: { $regex: '(' } }, /eventFilter\.a\.\$regex: Invalid regular expression/],
      [{ 'output.text': { $regex: '[z-a]' } }, /eventFilter\.output\.text\.\$regex: Invalid regular expression/],
      [{ a: { $regex: 'x'.repeat(201) } }, /\$regex: must be at most 200 characters/],
      [{ output: { $regex: '^(a+)+$' } }, /eventFilter\.output\.\$regex: may backtrack catastrophically/],
      [{ output: { $regex: '(x|x)*y|(.*)*z' } }, /may backtrack catastrophically/],
      [{ a: 'x'.repeat(1001) }, /eventFilter\.a: must be at most 1000 characters/],
      [Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])), /eventFilter: must have at most 20 keys/],
      [[], /eventFilter: /],
      ['x', /eventFilter: /],
    ];
    for (const [filter, message] of cases) assert.match(refused(filter), message, JSON.stringify(filter).slice(0, 60));
  });
});
