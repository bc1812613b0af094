import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { Response, ResponseCreateParamsNonStreaming, ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';

/**
 * OpenAI's Responses API (`POST {MODEL_BASE_URL}/responses`, MODEL_API=responses) spoken with the engine's
 * Chat Completions terms: a model step's request is translated into a Responses request and its answer back
 * into a completion, so steps, usage metering, limits and streaming are the same whichever protocol the
 * provider speaks (docs/api.md § Agents that think (the model executor)).
 * - messages → `input` items: system, user and assistant text as messages; an assistant's tool calls as
 *   `function_call` items (its `call_id` the call's id); a tool message as `function_call_output`.
 * - tools → `{ type: "function", name, description, parameters, strict: false }`; `tool_choice` kept.
 * - `store: false`: the provider keeps no conversation state; every call sends the run's conversation, as
 *   with Chat Completions.
 * - the answer: its `output_text` parts as the content, its `function_call` items as tool calls,
 *   `input_tokens` / `output_tokens` as the usage.
 */
export function responsesRequest(body: ChatCompletionCreateParamsNonStreaming): ResponseCreateParamsNonStreaming {
  const input: ResponseInputItem[] = [];
  for (const m of body.messages) {
    if (m.role === 'tool') {
      input.push({ type: 'function_call_output', call_id: m.tool_call_id, output: typeof m.content === 'string' ? m.content : JSON.stringify(m.content) });
      continue;
    }
    if (m.role !== 'system' && m.role !== 'user' && m.role !== 'assistant') continue;
    const text = typeof m.content === 'string' ? m.content : m.content ? JSON.stringify(m.content) : null;
    if (text !== null && text !== '') input.push({ type: 'message', role: m.role, content: text });
    if (m.role === 'assistant') {
      for (const call of m.tool_calls ?? []) {
        if (call.type === 'function') input.push({ type: 'function_call', call_id: call.id, name: call.function.name, arguments: call.function.arguments });
      }
    }
  }
  return {
    model: body.model,
    input,
    store: false,
    ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
    ...(body.tools && body.tools.length > 0
      ? {
          tools: body.tools.flatMap((t) =>
            t.type === 'function'
              ? [{ type: 'function' as const, name: t.function.name, description: t.function.description ?? null, parameters: t.function.parameters ?? { type: 'object' }, strict: false }]
              : [],
          ),
          ...(body.tool_choice === 'none' ? { tool_choice: 'none' as const } : {}),
        }
      : {}),
  };
}

/** A Responses API answer as the completion the engine records. */
export function completionOf(response: Response): ChatCompletion {
  let content: string | null = null;
  const toolCalls: NonNullable<ChatCompletion['choices'][number]['message']['tool_calls']> = [];
  for (const item of response.output ?? []) {
    if (item.type === 'message') {
      for (const part of item.content) if (part.type === 'output_text') content = (content ?? '') + part.text;
    } else if (item.type === 'function_call') {
      toolCalls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
    }
  }
  const finish = toolCalls.length > 0 ? 'tool_calls' : response.status === 'incomplete' ? 'length' : 'stop';
  return {
    id: response.id,
    object: 'chat.completion',
    created: response.created_at,
    model: response.model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) }, finish_reason: finish, logprobs: null }],
    ...(response.usage
      ? { usage: { prompt_tokens: response.usage.input_tokens, completion_tokens: response.usage.output_tokens, total_tokens: response.usage.total_tokens } }
      : {}),
  };
}

/**
 * The final response of a streamed Responses call, `onText` told each `response.output_text.delta` on the
 * way; a `response.failed` or `error` event, or a stream that ends without `response.completed` or
 * `response.incomplete`, throws.
 */
export async function collectResponse(events: AsyncIterable<ResponseStreamEvent>, onText?: (text: string) => void): Promise<Response> {
  for await (const event of events) {
    if (event.type === 'response.output_text.delta') onText?.(event.delta);
    else if (event.type === 'response.completed' || event.type === 'response.incomplete') return event.response;
    else if (event.type === 'response.failed') throw new Error(`the model provider failed the response: ${event.response.error?.message ?? 'no reason given'}`);
    else if (event.type === 'error') throw new Error(`the model provider's stream reported an error: ${event.message}`);
  }
  throw new Error('the model provider ended the stream before the response was complete');
}
