import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { isMissing, mergePatch, parseWith } from '../../api/validation';

describe('mergePatch (RFC 7386)', () => {
  it('replaces, removes with null, merges nested objects, replaces arrays', () => {
    const target = { a: 1, b: { c: 2, d: 3 }, list: [1, 2], keep: 'x' };
    assert.deepEqual(mergePatch(target, { a: 9, b: { d: null, e: 4 }, list: [3], gone: null }), { a: 9, b: { c: 2, e: 4 }, list: [3], keep: 'x' });
    assert.deepEqual(target, { a: 1, b: { c: 2, d: 3 }, list: [1, 2], keep: 'x' });
    assert.deepEqual(mergePatch({ a: 'scalar' }, { a: { b: 1 } }), { a: { b: 1 } });
  });
});

describe('parseWith', () => {
  const schema = z.strictObject({ botToken: z.string().min(1), nested: z.strictObject({ n: z.int() }).optional() });
  it('returns the parsed value', () => {
    assert.deepEqual(parseWith(schema, { botToken: 't' }, 'body.configJson'), { botToken: 't' });
  });
  it('names the field in the message', () => {
    assert.throws(() => parseWith(schema, {}, 'body.configJson'), { statusCode: 400, message: 'body.configJson.botToken: is required' });
    const roles = z.strictObject({ role: z.enum(['admin', 'viewer']) });
    assert.throws(() => parseWith(roles, {}, 'body'), { message: 'body.role: is required' });
    assert.throws(() => parseWith(roles, { role: 'boss' }, 'body'), /body.role: Invalid option/);
    assert.throws(() => parseWith(schema, { botToken: 't', nested: { n: 1.5 } }, 'body.configJson'), /body\.configJson\.nested\.n: /);
    assert.throws(() => parseWith(schema, { botToken: 't', extra: 1 }, 'body.configJson'), /body\.configJson: Unrecognized key: "extra"/);
  });
});

describe('isMissing', () => {
  it('tells an absent value from a present invalid one', () => {
    assert.equal(isMissing({ a: { b: 1 } }, ['a', 'c']), true);
    assert.equal(isMissing({ a: { b: undefined } }, ['a', 'b']), false);
    assert.equal(isMissing({ a: { b: null } }, ['a', 'b']), false);
    assert.equal(isMissing({ a: 'x' }, ['a', 'b']), false);
    assert.equal(isMissing({ list: ['x'] }, ['list', '1']), true);
    assert.equal(isMissing(undefined, []), true);
  });
});
