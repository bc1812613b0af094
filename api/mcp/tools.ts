import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AGENT_STATUSES } from '../schemas/agents';
import { maxJsonBytes } from '../schemas/common';
import { threadId } from '../schemas/runs';
import { NotFoundError } from '../errors';
import type { Run } from '../mappers';
import type { Access, Caller } from '../services/access';
import type { AgentService } from '../services/agent-service';
import type { ApprovalService } from '../services/approval-service';
import { approvalDecisionBody } from '../schemas/approvals';
import type { RunService } from '../services/run-service';
import type { RunWaits } from '../services/run-waits';

/**
 * The tools of our MCP server (`POST /api/mcp`, docs/api.md § MCP server), one entry each: its input
 * schema, the right the REST call it stands for needs (api/services/access.ts, checked as the route
 * would: a refusal is a result with `isError` and the REST API's message), and what it does — through
 * the same service the REST route calls, so quotas, rate limits, audit and events are the REST call's.
 */

export interface McpToolContext {
  caller: Caller;
  agents: AgentService;
  runs: RunService;
  runWaits: RunWaits;
  approvals: ApprovalService;
  /** Aborted when the MCP client goes away. */
  signal: AbortSignal;
}

export interface McpToolEntry<S extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  inputSchema: S;
  /** What the REST call this tool stands for requires of the caller's role. */
  access: Access;
  /** Hints for clients (MCP ToolAnnotations). */
  readOnly: boolean;
  run(ctx: McpToolContext, args: z.output<z.ZodObject<S>>): Promise<CallToolResult>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A malformed id is a 404, as in a REST path (docs/api.md § Conventions). */
function requireUuid(id: string, resource: string): void {
  if (!UUID.test(id)) throw new NotFoundError(resource);
}

/** A result whose text is `value` as JSON, with the value as structuredContent. */
function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/** What a finished run said: a model run's text; the tool executor's output as JSON. */
function outputText(run: Run): string {
  const output = run.output as Record<string, unknown> | null;
  if (output && typeof output.text === 'string') return output.text;
  return JSON.stringify(output);
}

/** The longest `run_agent` waits for the run to end. */
export const MAX_WAIT_SECONDS = 60;

const entry = <S extends z.ZodRawShape>(e: McpToolEntry<S>) => e as unknown as McpToolEntry;

export const MCP_TOOLS: McpToolEntry[] = [
  entry({
    name: 'list_agents',
    title: 'List agents',
    description:
      'The agents of the account, newest first (at most 200): id, name, description, status. query finds a text in their name or ' +
      'description; status keeps one status (draft, active, paused, template). Only draft and active agents run.',
    inputSchema: {
      query: z.string().trim().min(1).max(200).optional().describe('Only agents whose name or description contains this text (any case)'),
      status: z.enum(AGENT_STATUSES).optional().describe('Only agents with this status'),
    },
    access: 'read',
    readOnly: true,
    async run({ caller, agents }, { query, status }) {
      const page = await agents.list(caller, { limit: 200 }, { text: query, status });
      const list = page.items.map((a) => ({ id: a.id, name: a.name, description: a.description, status: a.status, updatedAt: a.updatedAt }));
      return jsonResult({ agents: list, more: page.next !== undefined });
    },
  }),
  entry({
    name: 'run_agent',
    title: 'Run an agent',
    description:
      "Starts a run of the agent with input (with a language model: the user's message) and waits up to waitSeconds (0–60, default " +
      "30) for it to end: then the run's answer (its output text), or, when it failed, an error with the run's error. A run still " +
      'queued or running at the end of the wait answers { runId, status }: follow it with get_run. Runs with the same threadId share ' +
      'a conversation. Needs the editor or admin role (viewers may not run agents).',
    inputSchema: {
      agentId: z.string().describe('The agent to run (its id, from list_agents)'),
      input: maxJsonBytes(z.unknown(), 65_536).describe("The run's input: the user's message as a string, or any JSON value (at most 64 KiB)"),
      threadId: threadId.optional(),
      waitSeconds: z.number().int().min(0).max(MAX_WAIT_SECONDS).optional().describe('How long to wait for the run to end, 0–60 s; default 30'),
    },
    access: 'write',
    readOnly: false,
    async run({ caller, runs, runWaits, signal }, { agentId, input, threadId, waitSeconds }) {
      requireUuid(agentId, 'Agent');
      const started = await runs.create(caller, agentId, { input, ...(threadId !== undefined ? { threadId } : {}) });
      await runWaits.untilEnded(caller.accountId, started.id, (waitSeconds ?? 30) * 1000, signal);
      const run = await runs.get(caller, started.id);
      if (run.status === 'succeeded') {
        return { content: [{ type: 'text', text: outputText(run) }], structuredContent: { runId: run.id, status: run.status, output: run.output } };
      }
      if (run.status === 'failed') {
        return { content: [{ type: 'text', text: `the run failed: ${run.error ?? 'no error recorded'}` }], structuredContent: { runId: run.id, status: run.status, error: run.error }, isError: true };
      }
      return jsonResult({ runId: run.id, status: run.status });
    },
  }),
  entry({
    name: 'get_run',
    title: 'Get a run',
    description: 'One run of the account: status (queued, running, succeeded, failed), input, output (a model run: { text, steps, usage }), error, usage and times.',
    inputSchema: { runId: z.string().describe('The run (its id, from run_agent)') },
    access: 'read',
    readOnly: true,
    async run({ caller, runs }, { runId }) {
      requireUuid(runId, 'Run');
      return jsonResult(await runs.get(caller, runId));
    },
  }),
  entry({
    name: 'decide_approval',
    title: 'Decide an approval',
    description:
      "Approves or rejects a tool call a waiting run asked for (get_run shows its status waiting; the approval's id is in " +
      "run.waiting and in the run's approvals). approve calls the tool, with arguments when given (checked against the tool's " +
      "parameters) instead of the model's; reject tells the model no, with comment. Answers the approval as decided. Needs the " +
      'editor or admin role.',
    inputSchema: {
      approvalId: z.string().describe('The approval (its id, from run.waiting or the run\'s approvals)'),
      decision: approvalDecisionBody.shape.decision.describe('approve or reject'),
      arguments: approvalDecisionBody.shape.arguments,
      comment: approvalDecisionBody.shape.comment,
    },
    access: 'write',
    readOnly: false,
    async run({ caller, approvals }, { approvalId, decision, arguments: args, comment }) {
      requireUuid(approvalId, 'Approval');
      const body = { decision, ...(args !== undefined ? { arguments: args } : {}), ...(comment !== undefined ? { comment } : {}) };
      return jsonResult(await approvals.decide(caller, approvalId, body));
    },
  }),
];
