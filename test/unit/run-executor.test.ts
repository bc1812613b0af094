import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fillTemplate, mapResponse } from '../../activities/executor/custom-tool';
import { createDefaultExecutor } from '../../activities/executor/default-executor';
import { valueAtPath } from '../../lib/json-path';
import type { ToolRow } from '../../db/repositories/tools';
import { testConfig } from '../helpers/config';

describe('custom tool bodyTemplate', () => {
  const input = { a: { b: 'x "quoted"', list: [1, { c: true }] }, n: 3 };

  it('inserts the whole input and values at paths as JSON', () => {
    assert.equal(fillTemplate('{"all": {{input}}}', input), `{"all": ${JSON.stringify(input)}}`);
    assert.equal(fillTemplate('{"b": {{input.a.b}}, "n": {{ input.n }}, "c": {{input.a.list.1.c}}}', input), '{"b": "x \\"quoted\\"", "n": 3, "c": true}');
    assert.deepEqual(JSON.parse(fillTemplate('[{{input.a.list}}, {{input.a}}]', input)), [input.a.list, input.a]);
  });

  it('fills null for a missing path or input and leaves other braces alone', () => {
    assert.equal(fillTemplate('{{input.nope.deeper}} {{input.a.list.9}}', input), 'null null');
    assert.equal(fillTemplate('{{input}}', undefined), 'null');
    assert.equal(fillTemplate('{{other}} {input} {{ input.a b }}', input), '{{other}} {input} {{ input.a b }}');
  });
});

describe('responseMapping', () => {
  const response = { data: { price: 1.5, items: [{ id: 'p1' }] } };

  it('maps keys to values at dotted paths, null when missing', () => {
    assert.deepEqual(mapResponse(response, { price: 'data.price', first: 'data.items.0.id', none: 'data.zzz' }), { price: 1.5, first: 'p1', none: null });
  });

  it('without a mapping the result is the whole response', () => {
    assert.equal(mapResponse(response, undefined), response);
    assert.equal(mapResponse('plain text', {}), 'plain text');
  });

  it('reads paths like eventFilter does', () => {
    assert.equal(valueAtPath({ a: [10, 20] }, 'a.1'), 20);
    assert.equal(valueAtPath({ a: [10, 20] }, 'a.01'), undefined);
    assert.equal(valueAtPath({ a: 1 }, 'toString'), undefined, 'own properties only');
  });
});

describe('default executor', () => {
  const config = testConfig('postgres://unused', { ALLOW_PRIVATE_TARGETS: 'false' });
  const executor = createDefaultExecutor(config);
  const tool = (name: string, type: ToolRow['type'], configJson: Record<string, unknown>) =>
    ({ id: name, name, type, config_json: configJson, enabled: true }) as ToolRow;
  const agent = {} as never;

  it('succeeds with no tools', async () => {
    assert.deepEqual(await executor.execute({ agent, tools: [], input: 1 }), {
      output: { input: 1, tools: {}, summary: 'no enabled tools' },
      error: null,
    });
  });

  it('records a refused target as ok: false and fails the run when every tool failed; repeated names get a suffix', async () => {
    const loopback = tool('hook', 'custom', { endpoint: 'http://127.0.0.1:9/x', method: 'GET' });
    const { output, error } = await executor.execute({ agent, tools: [loopback, loopback, tool('dex', 'dex_pairs', { chainIds: ['x'], pairAddresses: [] })], input: null });
    const tools = output.tools as Record<string, { ok: boolean; error: string }>;
    assert.deepEqual(Object.keys(tools), ['hook', 'hook (2)', 'dex']);
    assert.equal(tools.hook!.ok, false);
    assert.match(tools.hook!.error, /target not allowed/);
    assert.match(tools.dex!.error, /no pairAddresses/);
    assert.match(error!, /^every tool failed \(hook: target not allowed.*; dex: no pairAddresses/);
    assert.equal(output.summary, '0 of 3 tools succeeded');
  });

  it('stops when cancelled', async () => {
    const signal = AbortSignal.abort();
    await assert.rejects(executor.execute({ agent, tools: [tool('t', 'coin_prices', { coinIds: ['x'] })], input: null, signal }), /cancelled/);
  });
});
