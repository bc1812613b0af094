import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodyProblem, MAX_BODY_DEPTH } from '../../api/plugins/body-guard';

const nested = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

describe('body guard', () => {
  it('passes ordinary bodies, emoji and deep-but-allowed nesting', () => {
    assert.equal(bodyProblem({ name: 'Agent 🤖', list: [1, 'two', null, { three: true }] }), null);
    assert.equal(bodyProblem(nested(MAX_BODY_DEPTH)), null);
    assert.equal(bodyProblem(null), null);
  });

  it('names where a body is nested too deeply', () => {
    assert.match(bodyProblem({ configJson: nested(MAX_BODY_DEPTH) })!, /^body\.configJson(\.a)+: is nested deeper than 64 levels$/);
    assert.match(bodyProblem(nested(100_000))!, /nested deeper/);
  });

  it('refuses strings Postgres cannot store: NUL and unpaired surrogates, in values and keys', () => {
    assert.equal(bodyProblem({ name: 'a\u0000b' }), 'body.name: contains a NUL character or an unpaired surrogate');
    assert.equal(bodyProblem({ c: { list: ['ok', '\ud800'] } }), 'body.c.list.1: contains a NUL character or an unpaired surrogate');
    assert.match(bodyProblem({ c: { '\udc00x': 1 } })!, /^body\.c: has a key/);
    assert.equal(bodyProblem({ pair: '\ud83e\udd16' }), null);
  });

  it('names prototype-pollution keys wherever they are: __proto__, and prototype inside constructor', () => {
    // JSON.parse keeps "__proto__" as an own key (an object literal would set the prototype instead).
    assert.equal(bodyProblem(JSON.parse('{"name":"x","__proto__":{"admin":true}}')), 'body: "__proto__" is not allowed as a key');
    assert.equal(bodyProblem(JSON.parse('{"configJson":{"list":[{"__proto__":1}]}}')), 'body.configJson.list.0: "__proto__" is not allowed as a key');
    assert.equal(
      bodyProblem(JSON.parse('{"a":{"constructor":{"prototype":{"admin":true}}}}')),
      'body.a.constructor: "prototype" is not allowed as a key inside "constructor"',
    );
    // Each key alone is ordinary data.
    assert.equal(bodyProblem({ constructor: 'x', prototype: { constructor: 1 }, proto: 1 }), null);
  });
});
