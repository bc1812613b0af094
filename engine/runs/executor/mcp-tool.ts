import type { ToolRow } from '../../../db/repositories/tools';
import { callFunction, McpFailure, type McpCallOptions } from '../../../lib/mcp/client';
import { allowedFunctions, mcpFunctionName, type FunctionLists, type McpToolConfig } from '../../../lib/mcp/functions';
import { resultText } from '../../../lib/mcp/result';
import { ToolError } from './http';
import type { OfferedTool } from './tool-functions';

/**
 * An `mcp` tool in a run (docs/api.md § MCP tools). A model run's plan records its MCP tools by id and name
 * (`mcpTools` of its context); each model step offers the functions their servers list then (lib/mcp/
 * functions.ts keeps each list for MCP_LIST_TTL), after the run's other tools, each named
 * `<tool name>_<function name>`; the tool step a call adds records the function it names. The step is
 * one `tools/call` (lib/mcp/client.ts): its text (and structuredContent) is the step's output; a result
 * with `isError` fails the step with its text, which the model reads. The step machinery records the
 * step once (engine/runs/steps.ts): a call that returned is not made again when the run resumes.
 */

/** An MCP tool of a run, as its plan records it. */
export interface McpToolRef {
  toolId: string;
  /** The tool's name when the run began: the prefix of its functions' names. */
  name: string;
}

/** The input of an MCP tool step: the function and the model's arguments. */
export interface McpCallInput {
  function: string;
  arguments: Record<string, unknown>;
}

/** Why a run without a model makes no MCP call: there is no one to choose the function and its arguments. */
export const MCP_NEEDS_MODEL = "an MCP tool's functions are called by a language model: this agent runs without one (MODEL_BASE_URL and a model)";

/** A description is cut to this (what the model reads of each function). */
const MAX_DESCRIPTION = 1024;

/** The agent's MCP tools among its enabled tools, in created order; undefined when none. */
export function mcpToolRefs(tools: ToolRow[]): McpToolRef[] | undefined {
  const refs = tools.filter((t) => t.type === 'mcp').map((t) => ({ toolId: t.id, name: t.name }));
  return refs.length ? refs : undefined;
}

/**
 * The functions a model step offers: `tools` (the run's other tools, as planned), then each MCP tool's
 * functions within its allow-list, named uniquely after all of `tools`. A tool deleted since the run began
 * offers nothing; a server that fails throws McpFailure naming the tool (the model step fails with it).
 */
export async function offeredFunctions(
  tools: OfferedTool[],
  mcpTools: McpToolRef[] | undefined,
  deps: { tool: (id: string) => Promise<ToolRow | null>; lists: FunctionLists; options: McpCallOptions },
): Promise<OfferedTool[]> {
  if (!mcpTools?.length) return tools;
  const listed = await Promise.all(
    mcpTools.map(async (ref) => {
      const tool = await deps.tool(ref.toolId);
      if (!tool || tool.type !== 'mcp') return null;
      const config = tool.config_json as unknown as McpToolConfig;
      try {
        return { ref, tool, functions: allowedFunctions(await deps.lists.list(tool.id, config, deps.options), config) };
      } catch (err) {
        if (err instanceof McpFailure) throw new McpFailure(err.kind, `MCP tool "${ref.name}": ${err.message}`);
        throw err;
      }
    }),
  );
  const taken = new Set(tools.map((t) => t.name));
  const offered = [...tools];
  for (const entry of listed) {
    if (!entry) continue;
    for (const f of entry.functions) {
      offered.push({
        name: mcpFunctionName(entry.ref.name, f.name, taken),
        toolId: entry.tool.id,
        toolType: 'mcp',
        description: (f.description.trim() || `${f.name} (a function of the MCP tool ${entry.ref.name})`).slice(0, MAX_DESCRIPTION),
        parameters: f.inputSchema,
        function: f.name,
        ...(entry.tool.requires_approval ? { requiresApproval: true } : {}),
      });
    }
  }
  return offered;
}

/**
 * The call a model's arguments make to an MCP tool's `fn`: a JSON object, to a function the tool still
 * allows (its allow-list as configured now); or why the call is not made, for the model to read.
 */
export function mcpCallOf(tool: ToolRow, fn: string | undefined, args: unknown): { tool: ToolRow; input: McpCallInput } | { error: string } {
  if (fn === undefined) return { error: 'the step names no function of the MCP tool' };
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return { error: `the arguments must be a JSON object, not ${typeof args === 'string' ? 'this text' : JSON.stringify(args)}` };
  }
  const allowed = (tool.config_json as unknown as McpToolConfig).functions;
  if (allowed && !allowed.includes(fn)) return { error: `the MCP tool no longer offers ${fn} (it is not in its functions allow-list)` };
  return { tool, input: { function: fn, arguments: args as Record<string, unknown> } };
}

/** One `tools/call`: the result's text; a result with isError is a ToolError with its text. */
export async function callMcpTool(config: McpToolConfig, input: unknown, opts: McpCallOptions): Promise<string> {
  const call = input as Partial<McpCallInput> | null;
  if (!call || typeof call.function !== 'string') {
    throw new ToolError(MCP_NEEDS_MODEL);
  }
  const { text, isError } = resultText(await callFunction(config, call.function, call.arguments ?? {}, opts));
  if (isError) throw new ToolError(text || `the MCP server answered that ${call.function} failed, without saying why`);
  return text;
}
