import { z } from 'zod';
import { ForbiddenError } from '../errors';
import { createHostCheck } from '../mcp/host-check';
import { answerMcp } from '../mcp/server';
import { MCP_TOOLS } from '../mcp/tools';
import { errorResponse } from '../schemas/common';
import type { AgentService } from '../services/agent-service';
import type { ApprovalService } from '../services/approval-service';
import type { RunService } from '../services/run-service';
import type { RunWaits } from '../services/run-waits';
import { callerOf, type App } from '../types';

/**
 * `POST /api/mcp`: our agents as an MCP server (docs/api.md § MCP server) for Claude Desktop, IDEs and other
 * agents. Authenticated like every route (Bearer access token or API key, `Account-Id`), with the lowest
 * right (read) at the door: each tool checks the right of the REST call it stands for. Without a
 * credential: 401 with `WWW-Authenticate: Bearer`. Stateless: `GET` (a server-sent stream) and `DELETE`
 * (ending a session) have no route, so they answer the API's 405 with `Allow: POST` (plugins/error-handler.ts).
 */
export function mcpRoutes(app: App, deps: { agents: AgentService; runs: RunService; runWaits: RunWaits; approvals: ApprovalService; publicBaseUrl: string }): void {
  const hostRefusal = createHostCheck(deps.publicBaseUrl);
  const tags = ['mcp'];

  app.post(
    '/api/mcp',
    {
      config: { access: 'read' },
      // RFC 6750 § 3: a 401 of a Bearer-protected resource names the scheme (MCP clients read it).
      onSend: (request, reply, payload, done) => {
        if (reply.statusCode === 401) reply.header('WWW-Authenticate', 'Bearer realm="agent-platform"');
        done(null, payload);
      },
      schema: {
        tags,
        summary: 'MCP server (Streamable HTTP)',
        description:
          'A stateless MCP server (Model Context Protocol, Streamable HTTP, protocol 2025-06-18 and later; answers in JSON) for the ' +
          "account the credential acts in. Tools: " + MCP_TOOLS.map((t) => `${t.name} (${t.access === 'read' ? 'any role' : 'editor or admin'})`).join(', ') +
          '. A body of notifications only (notifications/initialized) answers 202 without a body. A tool the caller has no right to answers a result with isError and the message the REST API would give; run_agent ' +
          'is charged, limited and audited like POST /api/agents/:id/runs. The body is a JSON-RPC message or batch; protocol errors ' +
          "are JSON-RPC error bodies. Requests must be addressed to PUBLIC_BASE_URL's host or a loopback name (Host, and Origin when " +
          'sent): others answer 403 (DNS rebinding protection). Without a credential: 401 with WWW-Authenticate: Bearer.',
        body: z.unknown().describe('A JSON-RPC 2.0 message (or batch) of MCP'),
        response: {
          200: z.unknown().describe('The JSON-RPC response (or batch of responses), Content-Type application/json'),
          406: z
            .unknown()
            .describe('Accept does not name both application/json and text/event-stream, as Streamable HTTP requires: a JSON-RPC error body'),
          403: errorResponse("The request's Host or Origin is not this server's (DNS rebinding protection)."),
        },
      },
    },
    async (request, reply) => {
      const refused = hostRefusal(request.host, request.headers.origin);
      if (refused) throw new ForbiddenError(refused);
      const gone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableEnded) gone.abort();
      };
      request.raw.socket?.once('close', onClose);
      try {
        const answer = await answerMcp(
          { url: request.url, headers: request.headers, body: request.body },
          { caller: callerOf(request), agents: deps.agents, runs: deps.runs, runWaits: deps.runWaits, approvals: deps.approvals, signal: gone.signal },
          (msg, err) => request.log.error({ err }, msg),
        );
        // Any status the transport chose (200, 202, 4xx with a JSON-RPC error): only 403 is this route's own.
        reply.code(answer.status as 200);
        for (const [name, value] of answer.headers) reply.header(name, value);
        return reply.send(answer.body === '' ? undefined : answer.body);
      } finally {
        request.raw.socket?.off('close', onClose);
      }
    },
  );
}
