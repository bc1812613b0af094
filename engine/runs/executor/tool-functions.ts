import type { ToolRow } from '../../../db/repositories/tools';
import { compileJsonSchema, describeSchemaErrors } from '../../../lib/json-schema';

/**
 * How an agent's tools are offered to a language model: each enabled tool is a function
 * with a valid name, a description and a JSON Schema of its arguments — fixed for the data tools (the
 * model may narrow or change what they look up; the configured lists are the default), the tool's
 * `configJson.parameters` for custom tools. A model's arguments are checked against that schema before
 * the call; a mismatch is the tool step's error, which the model reads and may correct.
 */
export interface OfferedTool {
  /** The function name the model calls it by: `^[A-Za-z0-9_-]{1,64}$`, unique within the run. */
  name: string;
  toolId: string;
  toolType: ToolRow['type'];
  description: string;
  parameters: Record<string, unknown>;
  /** An MCP tool's function: its name on the server (mcp-tool.ts). */
  function?: string;
  /** A call of it waits for a person's decision first (docs/api.md § Approvals); absent: false. */
  requiresApproval?: boolean;
}

const idList = (what: string, max: number, configured: string[]) => ({
  type: 'array',
  items: { type: 'string', minLength: 1, maxLength: 200 },
  minItems: 1,
  maxItems: max,
  description: `${what}; default ${JSON.stringify(configured.slice(0, 20))}${configured.length > 20 ? ' …' : ''}`,
});

/** The fixed argument schemas of the data tools (their defaults shown from the tool's config). */
function dataToolParameters(tool: ToolRow): Record<string, unknown> {
  const c = tool.config_json as Record<string, string[] | undefined>;
  switch (tool.type) {
    case 'coin_prices':
      return { type: 'object', properties: { coinIds: idList('CoinGecko coin ids (e.g. "bitcoin")', 500, c.coinIds ?? []) }, additionalProperties: false };
    case 'prediction_markets':
      return { type: 'object', properties: { marketIds: idList('Polymarket market ids', 500, c.marketIds ?? []) }, additionalProperties: false };
    case 'dex_pairs':
      return {
        type: 'object',
        properties: {
          chainIds: idList('DexScreener chain ids (e.g. "solana")', 100, c.chainIds ?? []),
          pairAddresses: idList('Pair addresses on those chains', 500, c.pairAddresses ?? []),
        },
        additionalProperties: false,
      };
    case 'custom':
      return ((c as Record<string, unknown>).parameters as Record<string, unknown> | undefined) ?? { type: 'object' };
    case 'mcp': // its functions carry their own schemas (mcp-tool.ts)
      return { type: 'object' };
  }
}

const DEFAULT_DESCRIPTIONS: Record<ToolRow['type'], string> = {
  coin_prices: 'Spot prices in USD of CoinGecko coins',
  prediction_markets: 'Polymarket prediction markets: question, outcomes and prices',
  dex_pairs: 'DexScreener trading pairs: price, liquidity and volume',
  custom: 'Calls an HTTP endpoint',
  mcp: 'The functions of an MCP server',
};

/** A tool's name as a function name: other characters become `_`, at most 64 characters, a suffix when taken. */
export function functionName(name: string, taken: Set<string>): string {
  const base = (name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '') || 'tool').slice(0, 64);
  let candidate = base;
  for (let n = 2; taken.has(candidate); n++) candidate = `${base.slice(0, 64 - String(n).length - 1)}_${n}`;
  taken.add(candidate);
  return candidate;
}

/** The agent's enabled tools as functions, in created order. */
export function offerTools(tools: ToolRow[]): OfferedTool[] {
  const taken = new Set<string>();
  return tools.map((tool) => ({
    name: functionName(tool.name, taken),
    toolId: tool.id,
    toolType: tool.type,
    description: (tool.description.trim() || DEFAULT_DESCRIPTIONS[tool.type]).slice(0, 1024),
    parameters: dataToolParameters(tool),
    ...(tool.requires_approval ? { requiresApproval: true } : {}),
  }));
}

/** The arguments a model passed, as the tool step records them: parsed JSON, or the text when it is not JSON. */
export function parseArguments(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The call a model's arguments make: checked against the tool's schema (as configured now), then the
 * data tools' lists replaced by the ones given, and a custom tool called with them as its input
 * (bodyTemplate's {{input}}). Or why the call is not made, for the model to read.
 */
export function applyArguments(tool: ToolRow, args: unknown): { tool: ToolRow; input: unknown } | { error: string } {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return { error: `the arguments must be a JSON object, not ${typeof args === 'string' ? 'this text' : JSON.stringify(args)}` };
  }
  const compiled = compileJsonSchema(dataToolParameters(tool));
  if (!compiled.ok) return { error: `the tool's parameters ${compiled.message}` };
  if (!compiled.validate(args)) return { error: `the arguments do not match the tool's parameters: ${describeSchemaErrors(compiled.validate.errors)}` };
  if (tool.type === 'custom') return { tool, input: args };
  return { tool: { ...tool, config_json: { ...tool.config_json, ...(args as Record<string, unknown>) } }, input: args };
}
