import { z } from 'zod';
import { errorResponse, idParams } from '../schemas/common';
import { createToolBody, toolFunctionSchema, toolSchema, updateToolBody } from '../schemas/tools';
import type { ToolFunctionService } from '../services/tool-functions';
import type { ToolService } from '../services/tool-service';
import { callerOf, type App } from '../types';
import { agentChildRoutes } from './agent-children';

export function toolRoutes(app: App, deps: { tools: ToolService; toolFunctions: ToolFunctionService; publicBaseUrl: string }): void {
  agentChildRoutes(app, {
    collection: 'tools',
    noun: 'tool',
    schemas: { item: toolSchema, create: createToolBody, update: updateToolBody },
    service: deps.tools,
    publicBaseUrl: deps.publicBaseUrl,
    createDescription:
      'Creates a tool of the agent (dex_pairs, prediction_markets, coin_prices, custom or mcp; configJson per type); its runs call ' +
      "the enabled tools in created order (with a model: offer them as functions). A custom tool's endpoint and an mcp tool's url must " +
      'be public addresses unless ALLOW_PRIVATE_TARGETS; their secret headers (every header but Content-Type, Accept, Accept-Language, ' +
      'User-Agent) are stored encrypted and shown in full in this response only. An mcp tool offers a model run every function its ' +
      'server lists (or those of its allow-list `functions`), each named <tool name>_<function name>.',
    quota: 'The agent already has its quota of tools (QUOTA_TOOLS_PER_AGENT, default 50)',
    checksUrls: true,
  });

  app.get(
    '/api/tools/:id/functions',
    {
      config: { access: 'read' },
      schema: {
        tags: ['tools'],
        summary: "List a tool's functions",
        description:
          'What the tool offers a model, as [{ name, description, inputSchema }]. For an mcp tool: the functions its server lists ' +
          "(tools/list, every page), within the tool's allow-list when it has one, named as the server names them; kept per tool for " +
          'MCP_LIST_TTL (5m; an edit of the url or headers lists again). For the other types: the one function a model run offers ' +
          '(its name made a valid function name). A server that cannot be reached, refuses to initialize, answers a protocol error, ' +
          'does not answer within TOOL_TIMEOUT_MS or answers more than 1 MiB: 502 whose message says which.',
        params: idParams,
        response: {
          200: z.array(toolFunctionSchema),
          429: errorResponse('This account has 8 requests waiting on MCP servers (or as many name lookups as it may) in this process; Retry-After says when to ask again.'),
          502: errorResponse('The MCP server could not be reached, refused to initialize, answered a protocol error, did not answer in time or answered too much; the message says which.'),
        },
      },
    },
    async (request) => deps.toolFunctions.list(callerOf(request), request.params.id),
  );
}
