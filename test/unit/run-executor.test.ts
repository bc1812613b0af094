import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { fillTemplate, mapResponse } from '../../engine/runs/executor/custom-tool';
import { createDefaultExecutor } from '../../engine/runs/executor/default-executor';
import { capError, capValue, jsonBytes, MAX_RUN_OUTPUT_BYTES, MAX_STEP_OUTPUT_BYTES } from '../../engine/runs/executor/output-cap';
import { callTool } from '../../engine/runs/executor/tool-call';
import type { ComposeContext } from '../../engine/runs/executor/types';
import type { RunStepRow } from '../../db/repositories/run-steps';
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
  const executor = createDefaultExecutor();
  type Composed = { output: { input: unknown; summary: string; tools: Record<string, { ok: boolean; result?: unknown }> }; error: string | null };
  const compose = (ctx: ComposeContext) => executor.compose(ctx) as unknown as Composed;
  const tool = (name: string, type: ToolRow['type']) => ({ id: randomUUID(), name, type }) as ToolRow;
  const agent = {} as never;
  const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
  let index = 0;
  const step = (name: string, s: Partial<RunStepRow>): RunStepRow => ({
    run_id: 'r', step_index: index++, type: 'tool', name, tool_id: null, tool_type: 'custom', input: null, output: null, error: null,
    usage: null, planned_by: null, started_at: at(0), finished_at: at(40), created_at: at(0), ...s,
  });

  it('plans one tool step per tool, in order; repeated names get a suffix', () => {
    const a = tool('hook', 'custom');
    const b = tool('hook', 'coin_prices');
    const c = tool('dex', 'dex_pairs');
    assert.deepEqual(executor.plan({ agent, tools: [a, b, c, a], input: 1, history: [] }), [
      { type: 'tool', name: 'hook', toolId: a.id, toolType: 'custom' },
      { type: 'tool', name: 'hook (2)', toolId: b.id, toolType: 'coin_prices' },
      { type: 'tool', name: 'dex', toolId: c.id, toolType: 'dex_pairs' },
      { type: 'tool', name: 'hook (3)', toolId: a.id, toolType: 'custom' },
    ]);
    assert.deepEqual(executor.toolCall(step('x', {}), a, { the: 'input' }), { tool: a, input: { the: 'input' } }, 'each tool step takes the run input');
  });

  it('succeeds with no tools', () => {
    assert.deepEqual(compose({ input: 1, steps: [], timedOut: false }), {
      output: { input: 1, tools: {}, summary: 'no enabled tools' },
      error: null,
    });
  });

  it('composes the outcomes; the run fails when every tool failed', () => {
    const steps = [step('hook', { error: 'target not allowed: x' }), step('dex', { tool_type: 'dex_pairs', error: 'no pairAddresses configured' })];
    const { output, error } = compose({ input: null, steps, timedOut: false });
    assert.deepEqual(output.tools, {
      hook: { type: 'custom', ok: false, error: 'target not allowed: x', durationMs: 40 },
      dex: { type: 'dex_pairs', ok: false, error: 'no pairAddresses configured', durationMs: 40 },
    });
    assert.equal(error, 'every tool failed (hook: target not allowed: x; dex: no pairAddresses configured)');
    assert.equal(output.summary, '0 of 2 tools succeeded');
    const one = compose({ input: null, steps: [...steps, step('ok', { output: { a: 1 } })], timedOut: false });
    assert.equal(one.error, null);
    assert.deepEqual(one.output.tools.ok, { type: 'custom', ok: true, result: { a: 1 }, durationMs: 40 });
  });

  it('a run out of time fails with "timed out", its unfinished steps too', () => {
    const steps = [step('done', { output: 'yes' }), step('hanging', { finished_at: null }), step('later', { started_at: null, finished_at: null })];
    const { output, error } = compose({ input: null, steps, timedOut: true });
    assert.equal(error, 'timed out');
    assert.equal(output.tools.done!.ok, true);
    assert.deepEqual({ ...output.tools.hanging, durationMs: 0 }, { type: 'custom', ok: false, error: 'timed out', durationMs: 0 });
    assert.deepEqual(output.tools.later, { type: 'custom', ok: false, error: 'not started: the run timed out', durationMs: 0 });
  });

  it('keeps the output within 256 KiB: the largest results give way first, the outcome around them stays', () => {
    const big = (kib: number) => ({ blob: 'x'.repeat(kib * 1024) });
    const steps = [step('a', { output: big(150) }), step('b', { output: big(100) }), step('c', { output: big(60) }), step('d', { output: { small: true } })];
    const { output } = compose({ input: { also: 'kept' }, steps, timedOut: false });
    assert.ok(jsonBytes(output) <= MAX_RUN_OUTPUT_BYTES);
    assert.deepEqual(output.tools.a, { type: 'custom', ok: true, result: { truncated: true, bytes: jsonBytes(big(150)) }, durationMs: 40 });
    assert.deepEqual(output.tools.b!.result, big(100), 'only as much as needed is given up');
    assert.deepEqual(output.tools.c!.result, big(60));
    assert.deepEqual(output.tools.d!.result, { small: true });
    assert.deepEqual(output.input, { also: 'kept' });

    const huge = compose({ input: big(300), steps: [step('a', { output: big(200) }), step('b', { output: big(200) })], timedOut: false }).output;
    assert.ok(jsonBytes(huge) <= MAX_RUN_OUTPUT_BYTES);
    assert.deepEqual(huge.input, { truncated: true, bytes: jsonBytes(big(300)) });
    assert.deepEqual(huge.tools.a!.result, { truncated: true, bytes: jsonBytes(big(200)) });
    assert.deepEqual(huge.tools.b!.result, big(200));
  });

  it('bounds single values and errors', () => {
    assert.deepEqual(capValue('x'.repeat(300 * 1024), MAX_STEP_OUTPUT_BYTES), { truncated: true, bytes: 300 * 1024 + 2 });
    assert.deepEqual(capValue({ a: 1 }, MAX_STEP_OUTPUT_BYTES), { a: 1 });
    const long = capError(`${'e'.repeat(1998)}😀tail`);
    assert.ok(long.length <= 2000);
    assert.doesNotMatch(long, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, 'no half of a surrogate pair');
  });
});

describe('tool calls', () => {
  const config = testConfig('postgres://unused', { ALLOW_PRIVATE_TARGETS: 'false' });
  const custom = { id: 't', name: 't', type: 'custom', config_json: { endpoint: 'http://127.0.0.1:9/x', method: 'GET' } } as unknown as ToolRow;

  it('refuses a private target, and makes no request once aborted', async () => {
    await assert.rejects(callTool(custom, null, config), /target not allowed/);
    const open = testConfig('postgres://unused', { ALLOW_PRIVATE_TARGETS: 'true' });
    await assert.rejects(callTool(custom, null, open, AbortSignal.abort()), /aborted/);
  });
});
