import { startReceiver, type Receiver } from './receiver';

/**
 * A scripted OpenAI-compatible model provider on loopback (`POST /v1/chat/completions`), standing in for
 * the external provider only: `script` answers each request's body with a completion.
 */

export interface ChatRequest {
  model: string;
  messages: { role: string; content: string | null }[];
}

export interface ModelServer {
  /** What to configure as MODEL_BASE_URL (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Requests answered so far. */
  calls: () => number;
  close: Receiver['close'];
}

let ids = 0;
const completion = (message: Record<string, unknown>, finishReason: string) => ({
  id: `chatcmpl-${++ids}`,
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'scripted',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});

/** A completion answering in text. */
export const textReply = (content: string) => completion({ content }, 'stop');

/** A completion asking for tool calls. */
export const toolCallsReply = (calls: { name: string; arguments: unknown }[]) =>
  completion(
    { content: null, tool_calls: calls.map((c, i) => ({ id: `call_${ids}_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) },
    'tool_calls',
  );

export async function startModelServer(script: (request: ChatRequest) => object): Promise<ModelServer> {
  const receiver = await startReceiver((req) => {
    if (req.url !== '/v1/chat/completions') return { status: 404, body: { error: { message: `no route ${req.url}` } } };
    const request = JSON.parse(req.body) as ChatRequest & { stream?: boolean };
    // This provider does not stream (yet): it refuses `stream: true` as such providers do, and the engine
    // asks again without it, then keeps to that (engine/runs/executor/model-client.ts).
    if (request.stream) return { status: 400, body: { error: { message: 'stream: streaming is not supported by this provider' } } };
    return { body: script(request) };
  });
  return { baseUrl: `${receiver.url}/v1`, calls: receiver.received, close: receiver.close };
}
