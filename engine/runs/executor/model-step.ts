import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { NewRunStep, RunStepRow } from '../../../db/repositories/run-steps';
import { jsonBytes, MAX_STEP_OUTPUT_BYTES } from './output-cap';
import type { McpToolRef } from './mcp-tool';
import { parseArguments, type OfferedTool } from './tool-functions';

/**
 * One model step of a run: the request it sends — the run's context (its first step's input),
 * then every earlier step as a message — and what its answer adds to the run: a tool step per tool call
 * and the model step that reads their results, or nothing when the model answered in text.
 */

/** A message of the conversation as the run records it (the system message, the thread's, the user's). */
export interface ContextMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The first model step's input: everything the run's model calls share, fixed when the run starts. */
export interface ModelContext {
  model: string;
  temperature: number | null;
  maxSteps: number;
  /** The system message, the thread's remembered messages, the user's message. */
  messages: ContextMessage[];
  tools: OfferedTool[];
  /**
   * The run's MCP tools (mcp-tool.ts): each model step offers, after `tools`, the functions their servers
   * list then (kept per tool for MCP_LIST_TTL). Absent when it has none.
   */
  mcpTools?: McpToolRef[];
  /**
   * How many of `messages` are the thread's remembered ones (right after the system message, if any): the
   * ones left out, oldest first, when a request would be larger than MODEL_CONTEXT_MAX_BYTES. Absent in
   * runs planned before: none is left out.
   */
  remembered?: number;
}

export interface ToolCallRecord {
  id: string;
  name: string;
  /** As the model wrote them: a JSON text. */
  arguments: string;
}

/** A model step's output. */
export interface ModelAnswer {
  content: string | null;
  toolCalls: ToolCallRecord[];
  finishReason: string | null;
}

/** A tool step's input in a model run. */
export interface ToolStepInput {
  callId: string;
  arguments: unknown;
  /** The MCP function the call names (its server's name for it), for a step of an MCP tool. */
  function?: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/** Tool calls one answer may ask for; more fail the step (each is an activity; this bounds a run's history). */
export const MAX_TOOL_CALLS_PER_ANSWER = 32;

export const contextOf = (steps: RunStepRow[]): ModelContext => {
  const first = steps[0];
  if (!first || first.type !== 'model' || !first.input) throw new Error('the run has no model context (its first step is not a model step)');
  return first.input as ModelContext;
};

/** How many model calls the steps up to `index` (included) make. */
export const modelCallNumber = (steps: RunStepRow[], index: number) => steps.filter((s) => s.type === 'model' && s.step_index <= index).length;

/** What a tool step tells the model: its output as JSON (a string as it is), or `{ "error": … }`. */
function toolResultText(step: RunStepRow): string {
  if (step.error !== null) return JSON.stringify({ error: step.error });
  return typeof step.output === 'string' ? step.output : JSON.stringify(step.output ?? null);
}

/**
 * The request of the model step at `index`. The last call a run may make (`maxSteps`) is asked to answer
 * in text (`tool_choice: "none"`).
 */
export function modelRequest(steps: RunStepRow[], index: number, offered?: OfferedTool[]): ChatCompletionCreateParamsNonStreaming {
  const context = contextOf(steps);
  return requestOf(
    context,
    steps.filter((s) => s.step_index < index),
    modelCallNumber(steps, index) >= context.maxSteps,
    offered,
  );
}

/**
 * The request sent with `context` after the `earlier` steps (in order); `last`: the run's last allowed call;
 * `offered`: the functions offered (default: the context's tools; a run with MCP tools: mcp-tool.ts offeredFunctions).
 */
export function requestOf(context: ModelContext, earlier: RunStepRow[], last: boolean, offered: OfferedTool[] = context.tools): ChatCompletionCreateParamsNonStreaming {
  const messages: ChatCompletionMessageParam[] = context.messages.map((m) => ({ role: m.role, content: m.content }));
  for (const step of earlier) {
    // An approved call is answered by the tool step that follows it (the same call id).
    if (step.type === 'approval' && (step.output as { approved?: boolean } | null)?.approved) continue;
    if (step.type === 'model') {
      const answer = step.output as ModelAnswer;
      messages.push({
        role: 'assistant',
        content: answer.content,
        ...(answer.toolCalls.length > 0
          ? { tool_calls: answer.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      });
    } else {
      messages.push({ role: 'tool', tool_call_id: (step.input as ToolStepInput).callId, content: toolResultText(step) });
    }
  }
  return {
    model: context.model,
    messages,
    ...(context.temperature !== null ? { temperature: context.temperature } : {}),
    ...(offered.length > 0
      ? {
          tools: offered.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })),
          ...(last ? { tool_choice: 'none' as const } : {}),
        }
      : {}),
  };
}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * `request` made to fit `maxBytes` (MODEL_CONTEXT_MAX_BYTES, its JSON body): the thread's remembered
 * messages (`context.remembered` of them after the system message) left out, oldest first, until it fits;
 * `kept`: how many of them it still holds. When it does not fit with none of them — the system message,
 * the user's message, the tools and the run's own steps so far alone are larger — the error naming the
 * limit: the request is not sent.
 */
export function fitRequest(
  request: ChatCompletionCreateParamsNonStreaming,
  context: Pick<ModelContext, 'messages' | 'remembered'>,
  maxBytes: number,
): { request: ChatCompletionCreateParamsNonStreaming; kept: number } | { error: string } {
  const remembered = context.remembered ?? 0;
  const first = context.messages[0]?.role === 'system' ? 1 : 0;
  let total = bytesOf(request);
  let dropped = 0;
  // Each message left out takes its JSON and one comma with it.
  while (total > maxBytes && dropped < remembered) {
    total -= bytesOf(request.messages[first + dropped]) + 1;
    dropped++;
  }
  const fit = dropped === 0 ? request : { ...request, messages: [...request.messages.slice(0, first), ...request.messages.slice(first + dropped)] };
  const size = dropped === 0 ? total : bytesOf(fit);
  if (size > maxBytes) {
    return {
      error:
        `the model request would be ${size} bytes${remembered > 0 ? " without the thread's remembered messages" : ''}, more than ` +
        `MODEL_CONTEXT_MAX_BYTES (${maxBytes}): the system message, the input, the tools and the run's steps so far are too large to send`,
    };
  }
  return { request: fit, kept: remembered - dropped };
}

/** The answer of a completion as the step records it, with its usage; or why it can't be used. */
export function answerOf(completion: ChatCompletion): { answer: ModelAnswer; usage: Usage } | { error: string } {
  const choice = completion?.choices?.[0];
  if (!choice?.message) return { error: 'the model provider answered without a choice' };
  const toolCalls = (choice.message.tool_calls ?? [])
    .filter((c) => c.type === 'function')
    .map((c, i) => ({ id: c.id || `call_${i}`, name: c.function.name, arguments: c.function.arguments ?? '' }));
  const answer: ModelAnswer = { content: choice.message.content ?? null, toolCalls, finishReason: choice.finish_reason ?? null };
  const usage = { promptTokens: completion.usage?.prompt_tokens ?? 0, completionTokens: completion.usage?.completion_tokens ?? 0 };
  if (toolCalls.length > MAX_TOOL_CALLS_PER_ANSWER) {
    return { error: `the model asked for ${toolCalls.length} tool calls in one answer; at most ${MAX_TOOL_CALLS_PER_ANSWER} are made` };
  }
  if (jsonBytes(answer) > MAX_STEP_OUTPUT_BYTES) return { error: `the model's answer is larger than ${MAX_STEP_OUTPUT_BYTES / 1024} KiB` };
  return { answer, usage };
}

/**
 * The steps an answer adds: a tool step per tool call (the function named, or none when the model named
 * a function it was not offered: that step fails, and the model reads why) and the model step after them;
 * nothing when it answered in text, or when it was the run's last allowed call.
 */
export function stepsAfter(steps: RunStepRow[], index: number, answer: ModelAnswer, tools?: OfferedTool[]): NewRunStep[] {
  const context = contextOf(steps);
  if (answer.toolCalls.length === 0 || modelCallNumber(steps, index) >= context.maxSteps) return [];
  const byName = new Map((tools ?? context.tools).map((t) => [t.name, t]));
  const calls = answer.toolCalls.map((call): NewRunStep => {
    const offered = byName.get(call.name);
    const input: ToolStepInput = {
      callId: call.id,
      arguments: parseArguments(call.arguments),
      ...(offered?.function !== undefined ? { function: offered.function } : {}),
    };
    const step: NewRunStep = { type: 'tool', name: call.name.slice(0, 200) || 'unnamed', toolId: offered?.toolId ?? null, toolType: offered?.toolType ?? null, input };
    return offered?.requiresApproval ? approvalStepOf(step, offered) : step;
  });
  const model: NewRunStep = { type: 'model', name: context.model };
  const approvals = calls.filter((s) => s.type === 'approval');
  if (approvals.length === 0) return [...calls, model];
  // The calls that need no approval are made first, as usual; the turn's last approval step adds the model
  // step after it once decided (engine/runs/approvals.ts), so the model reads every result of the turn.
  const last = approvals.at(-1)!;
  (last.input as ApprovalStepInput).thenModel = model.name;
  return [...calls.filter((s) => s.type !== 'approval'), ...approvals];
}

/**
 * An approval step's input (docs/api.md § Approvals): the call waiting for a decision — `toolId`, the MCP
 * `function` (null for other tools), the model's `arguments` — with what the run needs to go on: the tool
 * call's id, the schema edited arguments are checked against, and (`thenModel`) the model step to add after it.
 */
export interface ApprovalStepInput extends ToolStepInput {
  toolId: string;
  function?: string;
  parameters: Record<string, unknown>;
  thenModel?: string;
}

/** What an approval step records once decided: approved (its tool step follows), or the result the model reads. */
export type ApprovalStepOutput = { approved: true; arguments: unknown } | { rejected: true; comment: string | null; expired?: true };

function approvalStepOf(step: NewRunStep, offered: OfferedTool): NewRunStep {
  const input: ApprovalStepInput = { ...(step.input as ToolStepInput), toolId: offered.toolId, parameters: offered.parameters };
  return { ...step, type: 'approval', input };
}
