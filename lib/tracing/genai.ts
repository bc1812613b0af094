import type * as Otel from '@opentelemetry/api';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { genAiContentCaptured, tracingApi } from './context';

/**
 * The spans of a run's model and tool calls in OpenTelemetry's GenAI semantic conventions (v1.37 and
 * later, which name the provider `gen_ai.provider.name`, formerly `gen_ai.system`):
 * https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/ (a model call: `chat <model>`, kind
 * CLIENT) and https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-agent-spans/ (`execute_tool
 * <function>`, INTERNAL; the run's own `invoke_agent <agent name>` is made in its workflow,
 * workflows/agent-span.ts). Prompt and completion text (`gen_ai.input.messages`, `gen_ai.output.messages`,
 * a tool call's arguments and result) are set only with OTEL_GENAI_CAPTURE_CONTENT=true: they are the
 * tenant's data (docs/operations.md § Tracing). While tracing is off these are plain calls.
 */

/** The provider as the conventions name it: the engine speaks OpenAI's protocols (Chat Completions, Responses) to whatever MODEL_BASE_URL is. */
export const GENAI_PROVIDER = 'openai';

/** What a call's function can add to its span once it knows more. */
export interface GenAiSpan {
  /** Attributes known after the call started (the answer's model, its usage). */
  set(attributes: Otel.Attributes): void;
  /** Attributes holding the tenant's text: made and set only when OTEL_GENAI_CAPTURE_CONTENT=true. */
  content(attributes: () => Otel.Attributes): void;
  /** The call failed without throwing (an answer that can't be used): `error.type` and the status say so. */
  fail(errorType: string, message: string): void;
}

const UNTRACED: GenAiSpan = { set() {}, content() {}, fail() {} };

/** `error.type`: the failure's class (a low-cardinality name, as the conventions ask), `_OTHER` when it has none. */
function errorTypeOf(err: unknown): string {
  if (err instanceof Error) return err.constructor.name !== 'Error' ? err.constructor.name : err.name !== 'Error' ? err.name : '_OTHER';
  return '_OTHER';
}

function inGenAiSpan<T>(name: string, kind: 'client' | 'internal', attributes: Otel.Attributes, fn: (span: GenAiSpan) => Promise<T>): Promise<T> {
  const api = tracingApi();
  if (!api) return fn(UNTRACED);
  const spanKind = kind === 'client' ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL;
  return api.trace.getTracer('agent-platform').startActiveSpan(name, { kind: spanKind, attributes }, async (span) => {
    const handle: GenAiSpan = {
      set: (more) => span.setAttributes(more),
      content: (make) => {
        if (genAiContentCaptured()) span.setAttributes(make());
      },
      fail: (errorType, message) => {
        span.setAttribute('error.type', errorType);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message });
      },
    };
    try {
      return await fn(handle);
    } catch (err) {
      span.recordException(err as Error);
      handle.fail(errorTypeOf(err), (err as Error)?.message ?? String(err));
      throw err;
    } finally {
      span.end();
    }
  });
}

/** `server.address` / `server.port` of the provider's URL: its host alone (never its path, query or userinfo). */
function serverOf(baseUrl: string | null): Otel.Attributes {
  if (!baseUrl) return {};
  try {
    const url = new URL(baseUrl);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { 'server.address': url.hostname, 'server.port': port };
  } catch {
    return {};
  }
}

type Part = Record<string, unknown>;

/** A request's messages in the conventions' shape (`{ role, parts }`), for `gen_ai.input.messages`. */
function inputMessages(messages: ChatCompletionMessageParam[]): { role: string; parts: Part[] }[] {
  return messages.map((m) => {
    const parts: Part[] = [];
    const text = typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p) => ('text' in p ? p.text : '')).join('') : null;
    if (m.role === 'tool') return { role: 'tool', parts: [{ type: 'tool_call_response', id: m.tool_call_id, response: text }] };
    if (text) parts.push({ type: 'text', content: text });
    if (m.role === 'assistant') {
      for (const call of m.tool_calls ?? []) if (call.type === 'function') parts.push({ type: 'tool_call', id: call.id, name: call.function.name, arguments: call.function.arguments });
    }
    return { role: m.role, parts };
  });
}

/** An answer in the conventions' shape, for `gen_ai.output.messages`. */
function outputMessages(completion: ChatCompletion): { role: string; parts: Part[]; finish_reason: string }[] {
  return (completion.choices ?? []).map((choice) => {
    const parts: Part[] = [];
    if (choice.message?.content) parts.push({ type: 'text', content: choice.message.content });
    for (const call of choice.message?.tool_calls ?? []) if (call.type === 'function') parts.push({ type: 'tool_call', id: call.id, name: call.function.name, arguments: call.function.arguments });
    return { role: 'assistant', parts, finish_reason: choice.finish_reason ?? 'stop' };
  });
}

/** What a chat span tells once the provider answered: the answer's model, id, finish reasons and token usage (and, when captured, its text). */
export function chatAnswered(span: GenAiSpan, completion: ChatCompletion): void {
  const reasons = (completion.choices ?? []).map((c) => c.finish_reason).filter((r): r is NonNullable<typeof r> => typeof r === 'string');
  span.set({
    ...(completion.model ? { 'gen_ai.response.model': completion.model } : {}),
    ...(completion.id ? { 'gen_ai.response.id': completion.id } : {}),
    ...(reasons.length > 0 ? { 'gen_ai.response.finish_reasons': reasons } : {}),
    ...(completion.usage ? { 'gen_ai.usage.input_tokens': completion.usage.prompt_tokens, 'gen_ai.usage.output_tokens': completion.usage.completion_tokens } : {}),
  });
  span.content(() => ({ 'gen_ai.output.messages': JSON.stringify(outputMessages(completion)) }));
}

/** A model call, `chat <model>` (CLIENT): `fn` makes it, and tells the span the answer (`chatAnswered`). */
export function chatSpan<T>(request: ChatCompletionCreateParamsNonStreaming, baseUrl: string | null, fn: (span: GenAiSpan) => Promise<T>): Promise<T> {
  const attributes: Otel.Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': GENAI_PROVIDER,
    'gen_ai.request.model': request.model,
    'gen_ai.output.type': 'text',
    ...(typeof request.temperature === 'number' ? { 'gen_ai.request.temperature': request.temperature } : {}),
    ...serverOf(baseUrl),
  };
  return inGenAiSpan(`chat ${request.model}`, 'client', attributes, (span) => {
    span.content(() => ({ 'gen_ai.input.messages': JSON.stringify(inputMessages(request.messages)) }));
    return fn(span);
  });
}

/** A tool call, `execute_tool <function>` (INTERNAL): the function the model named, its call id (none in a tool-executor run). */
export function executeToolSpan<T>(tool: { name: string; callId?: string; description?: string }, fn: (span: GenAiSpan) => Promise<T>): Promise<T> {
  const attributes: Otel.Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool.name,
    'gen_ai.tool.type': 'function',
    ...(tool.callId ? { 'gen_ai.tool.call.id': tool.callId } : {}),
    ...(tool.description ? { 'gen_ai.tool.description': tool.description } : {}),
  };
  return inGenAiSpan(`execute_tool ${tool.name}`, 'internal', attributes, fn);
}
