import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible model provider on loopback (`POST /v1/chat/completions`), standing in for
 * the external provider only: `script` answers each request's body with a completion. A request with
 * `stream: true` gets that completion as the Chat Completions protocol streams it: `data: {chunk}` lines
 * (the role, the text in `chunks` pieces `gapMs` apart, each tool call, the finish reason), a last chunk
 * with the usage when `stream_options.include_usage`, then `data: [DONE]`. With `streaming: false` it
 * refuses `stream: true` (400) as providers without streaming do, and the engine asks again without it
 * (engine/runs/executor/model-client.ts).
 */

export interface ChatRequest {
  model: string;
  messages: { role: string; content: string | null }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

/** How a streamed answer's text is sent: in `chunks` pieces, `gapMs` between two, its first byte once `hold` resolves (the model thinking). */
export interface StreamShape {
  chunks: number;
  gapMs: number;
  hold?: () => Promise<void>;
}

export interface ModelServerOptions {
  /** false: refuse `stream: true` (default: stream). */
  streaming?: boolean;
  /** The shape of a streamed answer (default: its text in one chunk, no gap). */
  shape?: (request: ChatRequest) => StreamShape;
  /** Told when the first byte of each answer is written (performance.now()). */
  onFirstByte?: (request: ChatRequest, at: number) => void;
}

export interface ModelServer {
  /** What to configure as MODEL_BASE_URL (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Requests answered so far. */
  calls: () => number;
  close: () => Promise<void>;
}

interface Completion {
  id: string;
  created: number;
  model: string;
  choices: { message: { content: string | null; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[] }; finish_reason: string }[];
  usage: Record<string, number>;
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

/** `text` in `n` pieces of (about) equal length; none for no text. */
function piecesOf(text: string, n: number): string[] {
  if (text === '') return [];
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, n)));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

/** Writes `c` to `res` as the Chat Completions protocol streams it. */
async function streamCompletion(res: http.ServerResponse, c: Completion, includeUsage: boolean, shape: StreamShape, firstByte: () => void): Promise<void> {
  const choice = c.choices[0]!;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model, choices, ...extra })}\n\n`;
  const write = (text: string) => !res.destroyed && res.write(text);
  if (shape.hold) await shape.hold();
  if (res.destroyed) return;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  firstByte();
  write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
  for (const [i, piece] of piecesOf(choice.message.content ?? '', shape.chunks).entries()) {
    if (i > 0 && shape.gapMs > 0) await new Promise((r) => setTimeout(r, shape.gapMs));
    write(chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]));
  }
  for (const [i, call] of (choice.message.tool_calls ?? []).entries()) {
    write(chunk([{ index: 0, delta: { tool_calls: [{ index: i, id: call.id, type: 'function', function: call.function }] }, finish_reason: null }]));
  }
  write(chunk([{ index: 0, delta: {}, finish_reason: choice.finish_reason }]));
  if (includeUsage) write(chunk([], { usage: c.usage }));
  write('data: [DONE]\n\n');
  if (!res.destroyed) res.end();
}

export async function startModelServer(script: (request: ChatRequest) => object, options: ModelServerOptions = {}): Promise<ModelServer> {
  let calls = 0;
  const { streaming = true, shape = () => ({ chunks: 1, gapMs: 0 }), onFirstByte } = options;
  const server = http.createServer((req, res) => {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      const json = (status: number, value: unknown) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        onFirstByte?.(request, performance.now());
        res.end(JSON.stringify(value));
      };
      let request: ChatRequest;
      try {
        request = JSON.parse(Buffer.concat(body).toString('utf8')) as ChatRequest;
      } catch {
        res.writeHead(400).end();
        return;
      }
      if (req.url !== '/v1/chat/completions') return json(404, { error: { message: `no route ${req.url}` } });
      calls++;
      if (request.stream && !streaming) return json(400, { error: { message: 'stream: streaming is not supported by this provider' } });
      const answer = script(request) as Completion;
      if (!request.stream) return json(200, answer);
      void streamCompletion(res, answer, request.stream_options?.include_usage === true, shape(request), () => onFirstByte?.(request, performance.now()));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
