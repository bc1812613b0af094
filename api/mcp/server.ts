import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../errors';
import { refusal } from '../services/access';
import { MCP_TOOLS, type McpToolContext } from './tools';

/**
 * Our MCP server (docs/api.md § MCP server): stateless Streamable HTTP, one McpServer and transport per
 * HTTP request (no session: any API process answers any request), answering in JSON (no SSE stream: every
 * tool answers once). The caller was authenticated by the API's own hook; each tool checks the caller's
 * right as its REST route would and calls the same service.
 */

const INSTRUCTIONS =
  'Agent Platform: list the agents of the account (list_agents), run one with an input and get its answer (run_agent), ' +
  'follow a run that is still going (get_run), and approve or reject a tool call a waiting run asks for (decide_approval). The account is the one the credential acts in (Account-Id header).';

/** A tool's failure as the MCP client sees it: a result with isError and the API's message, never a protocol error. */
function failure(err: unknown, log: (msg: string, err: unknown) => void): CallToolResult {
  if (err instanceof AppError) {
    const retry = err.retryAfterSeconds ? ` (try again in ${err.retryAfterSeconds} s)` : '';
    return { content: [{ type: 'text', text: `${err.message}${err.message.includes('again in') ? '' : retry}` }], isError: true };
  }
  log('an MCP tool call failed', err);
  return { content: [{ type: 'text', text: 'Internal server error' }], isError: true };
}

function buildServer(ctx: McpToolContext, log: (msg: string, err: unknown) => void): McpServer {
  const server = new McpServer({ name: 'agent-platform', title: 'Agent Platform', version: '1.0.0' }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  for (const tool of MCP_TOOLS) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: { readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
      },
      async (args: Record<string, unknown>) => {
        const refused = refusal(tool.access, ctx.caller);
        if (refused) return { content: [{ type: 'text', text: refused }], isError: true };
        try {
          return await tool.run(ctx, args as never);
        } catch (err) {
          return failure(err, log);
        }
      },
    );
  }
  return server;
}

/**
 * Answers one POST of the MCP endpoint: the JSON-RPC message(s) of `body` (already parsed and bounded by
 * the API), with the request's headers (Accept, Content-Type, Mcp-Protocol-Version are the transport's to
 * check). Returns the HTTP answer to send: status, headers and body text (empty for 202).
 */
export async function answerMcp(
  request: { url: string; headers: Record<string, string | string[] | undefined>; body: unknown },
  ctx: McpToolContext,
  log: (msg: string, err: unknown) => void,
): Promise<{ status: number; headers: [string, string][]; body: string }> {
  const server = buildServer(ctx, log);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
    const answer = await transport.handleRequest(new Request(new URL(request.url, 'http://mcp.invalid'), { method: 'POST', headers }), { parsedBody: request.body });
    const out: [string, string][] = [];
    answer.headers.forEach((value, name) => out.push([name, value]));
    return { status: answer.status, headers: out, body: await answer.text() };
  } finally {
    await server.close().catch(() => {});
  }
}
