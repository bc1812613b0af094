import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ToolRow } from '../../db/repositories/tools';
import { mcpCallOf, offeredFunctions } from '../../engine/runs/executor/mcp-tool';
import type { OfferedTool } from '../../engine/runs/executor/tool-functions';
import { allowedFunctions, mcpFunctionName, type FunctionLists } from '../../lib/mcp/functions';
import { MAX_RESULT_CHARACTERS, resultText } from '../../lib/mcp/result';

const fn = (name: string, description = '') => ({ name, description, inputSchema: { type: 'object' } });

describe('MCP functions as a model run offers them (docs/api.md § MCP tools)', () => {
  it('names each <tool name>_<function name>: other characters made _, at most 64, unique in the run', () => {
    const taken = new Set<string>(['search_issues']);
    assert.equal(mcpFunctionName('GitHub (work)', 'list.repos', taken), 'GitHub__work__list_repos');
    assert.equal(mcpFunctionName('search', 'issues', taken), 'search_issues_2', 'a name another tool has');
    assert.equal(mcpFunctionName('search', 'issues', taken), 'search_issues_3');
    const long = mcpFunctionName('t'.repeat(40), 'f'.repeat(40), taken);
    assert.equal(long, `${'t'.repeat(40)}_${'f'.repeat(23)}`);
    assert.equal(mcpFunctionName('t'.repeat(40), 'f'.repeat(40), taken), `${'t'.repeat(40)}_${'f'.repeat(21)}_2`);
    for (const name of taken) assert.match(name, /^[A-Za-z0-9_-]{1,64}$/);
  });

  it('keeps the allow-list in the order the server lists, and all without one', () => {
    const listed = [fn('a'), fn('b'), fn('c')];
    assert.deepEqual(allowedFunctions(listed, { functions: ['c', 'a', 'zz'] }).map((f) => f.name), ['a', 'c']);
    assert.deepEqual(allowedFunctions(listed, {}).map((f) => f.name), ['a', 'b', 'c']);
  });

  it('offers the MCP functions after the other tools, named after them, with the server\'s description and schema', async () => {
    const planned: OfferedTool[] = [{ name: 'srv_echo', toolId: 'c1', toolType: 'custom', description: 'x', parameters: { type: 'object' } }];
    const tool = { id: 'm1', type: 'mcp', name: 'srv', config_json: { url: 'http://h/mcp', functions: ['echo', 'sum'] } } as unknown as ToolRow;
    const lists = { list: async () => [fn('echo', 'Echoes'), fn('sum', ''), fn('env', 'Environment')] } as unknown as FunctionLists;
    const options = { timeoutMs: 1000, allowPrivate: true, dnsServers: null, accountId: null };
    const offered = await offeredFunctions(planned, [{ toolId: 'm1', name: 'srv' }], { tool: async () => tool, lists, options });
    assert.deepEqual(
      offered.map((o) => [o.name, o.toolId, o.function, o.description]),
      [
        ['srv_echo', 'c1', undefined, 'x'],
        ['srv_echo_2', 'm1', 'echo', 'Echoes'],
        ['srv_sum', 'm1', 'sum', 'sum (a function of the MCP tool srv)'],
      ],
    );
    const gone = await offeredFunctions(planned, [{ toolId: 'm1', name: 'srv' }], { tool: async () => null, lists, options });
    assert.deepEqual(gone, planned, 'a tool deleted since the run began offers nothing');
  });

  it('calls only a function the tool still allows, with a JSON object', () => {
    const tool = { id: 'm1', type: 'mcp', name: 'srv', config_json: { url: 'http://h/mcp', functions: ['echo'] } } as unknown as ToolRow;
    assert.deepEqual(mcpCallOf(tool, 'echo', { message: 'hi' }), { tool, input: { function: 'echo', arguments: { message: 'hi' } } });
    assert.deepEqual(mcpCallOf(tool, 'env', {}), { error: 'the MCP tool no longer offers env (it is not in its functions allow-list)' });
    assert.deepEqual(mcpCallOf(tool, 'echo', 'text'), { error: 'the arguments must be a JSON object, not this text' });
    assert.deepEqual(mcpCallOf(tool, undefined, {}), { error: 'the step names no function of the MCP tool' });
  });
});

describe('a tools/call result as the step records it', () => {
  it('joins the text parts, adds structuredContent as JSON unless a text part says it, names the other content', () => {
    assert.deepEqual(resultText({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }), { text: 'a\nb', isError: false });
    assert.deepEqual(resultText({ content: [{ type: 'text', text: '{"t": 1}' }], structuredContent: { t: 1 } }).text, '{"t": 1}');
    assert.deepEqual(resultText({ content: [{ type: 'text', text: 'hot' }], structuredContent: { t: 1 } }).text, 'hot\n{"t":1}');
    assert.deepEqual(resultText({ content: [], structuredContent: { t: 1 } }).text, '{"t":1}');
    assert.equal(
      resultText({
        content: [
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'resource_link', uri: 'file:///x', name: 'x' },
          { type: 'resource', resource: { uri: 'file:///y', text: 'inline' } },
          { type: 'resource', resource: { uri: 'file:///z', blob: 'AA', mimeType: 'application/zip' } },
        ],
      }).text,
      '[image image/png, 4 bytes of base64]\n[resource file:///x (x)]\ninline\n[resource file:///z, application/zip]',
    );
    assert.deepEqual(resultText({ content: [{ type: 'text', text: 'no' }], isError: true }), { text: 'no', isError: true });
  });

  it('keeps at most MAX_RESULT_CHARACTERS, saying how much it left out', () => {
    const { text } = resultText({ content: [{ type: 'text', text: 'x'.repeat(MAX_RESULT_CHARACTERS + 10) }] });
    assert.equal(text, `${'x'.repeat(MAX_RESULT_CHARACTERS)}… [10 more characters left out]`);
  });
});
