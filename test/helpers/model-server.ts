import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onCleanup, type Cleanup } from './cleanup';

/**
 * A scripted OpenAI-compatible model provider on loopback: `POST /v1/chat/completions` answers what the
 * script says for each request — text, tool calls, errors (429 with Retry-After, 400, …), after an
 * optional delay. A request with `stream: true` gets the same answer as the protocol streams it:
 * Server-Sent Events of `chat.completion.chunk`s (the role, the text piece by piece, the tool calls, the
 * finish reason, a last chunk with the usage when `stream_options.include_usage`), then `data: [DONE]`;
 * a model scripted with `{ streaming: false }` refuses `stream: true` with a 400, as such providers do.
 * `POST /v1/responses` speaks OpenAI's Responses API with the same scripts (a completion scripted is answered
 * as the response it would be: `output_text` message, `function_call` items, `input_tokens` / `output_tokens`;
 * streamed as `response.created`, `response.output_item.added`, `response.output_text.delta`, …,
 * `response.completed`); the request is recorded as sent (its `input` items, not `messages`).
 * It stands in for the external provider only; everything else in a test is real.
 * Scripts are chosen by the request's `model`, so each test names its own model and gets its own script.
 * Closed when `t` ends.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: { type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown> } }[];
  tool_choice?: unknown;
  temperature?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  /** A Responses API request's items (POST /v1/responses). */
  input?: Record<string, unknown>[];
}

export interface ModelCall {
  body: ChatRequest;
  headers: http.IncomingHttpHeaders;
  /** Set when the client went away before the answer (an aborted call). */
  aborted?: boolean;
}

export interface ModelReply {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Streamed: the text in these pieces, one chunk each (default: word by word). */
  pieces?: string[];
  /** Streamed: the wait before each piece after the first. */
  pieceDelayMs?: number;
  /** Streamed: the piece (its index) not sent before `until` resolves. */
  holdBefore?: { piece: number; until: Promise<unknown> };
}

/** `n`: how many requests this model had before this one (0 for its first). */
export type ModelScript = (call: ModelCall, n: number) => ModelReply;

let ids = 0;

/** A completion answering in text. */
export function textReply(content: string, usage = { prompt_tokens: 10, completion_tokens: 5 }): ModelReply {
  return {
    body: {
      id: `chatcmpl-${++ids}`,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'scripted',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

/** A completion asking for tool calls (`arguments` given as objects, sent as JSON text unless already a string). */
export function toolCallsReply(calls: { name: string; arguments: unknown; id?: string }[], usage = { prompt_tokens: 20, completion_tokens: 7 }): ModelReply {
  return {
    body: {
      id: `chatcmpl-${++ids}`,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'scripted',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: calls.map((c, i) => ({
              id: c.id ?? `call_${ids}_${i}`,
              type: 'function',
              function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
            })),
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

/** An error as OpenAI sends it: `{ error: { message, type, code } }`. */
export function errorReply(status: number, message: string, headers: Record<string, string> = {}): ModelReply {
  return { status, headers, body: { error: { message, type: status === 429 ? 'rate_limit_error' : 'invalid_request_error', code: null } } };
}

interface Completion {
  id: string;
  created: number;
  model: string;
  choices: { index: number; message: { role: string; content: string | null; tool_calls?: ChatMessage['tool_calls'] }; finish_reason: string }[];
  usage?: Record<string, number>;
}

/** Writes `reply` (a 200 completion) to `res` as the Chat Completions protocol streams it. */
async function streamReply(res: http.ServerResponse, reply: ModelReply, includeUsage: boolean): Promise<void> {
  const c = reply.body as Completion;
  const choice = c.choices[0]!;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model, choices, ...extra })}\n\n`;
  const write = (text: string) => !res.destroyed && res.write(text);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...reply.headers });
  write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
  const content = choice.message.content ?? '';
  const pieces = reply.pieces ?? content.match(/\S+\s*|\s+/g) ?? [];
  for (const [i, piece] of pieces.entries()) {
    if (reply.holdBefore?.piece === i) await reply.holdBefore.until;
    if (i > 0 && reply.pieceDelayMs) await new Promise((r) => setTimeout(r, reply.pieceDelayMs));
    write(chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]));
  }
  for (const [i, call] of (choice.message.tool_calls ?? []).entries()) {
    write(chunk([{ index: 0, delta: { tool_calls: [{ index: i, id: call.id, type: 'function', function: call.function }] }, finish_reason: null }]));
  }
  write(chunk([{ index: 0, delta: {}, finish_reason: choice.finish_reason }]));
  if (includeUsage && c.usage) write(chunk([], { usage: c.usage }));
  write('data: [DONE]\n\n');
  if (!res.destroyed) res.end();
}

/** A scripted completion as the Responses API answers it (`status` in_progress before its items are out). */
function responseOf(c: Completion, status = 'completed') {
  const choice = c.choices[0]!;
  const output: Record<string, unknown>[] = [];
  if (choice.message.content) {
    output.push({ type: 'message', id: `msg_${c.id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: choice.message.content, annotations: [] }] });
  }
  for (const [i, call] of (choice.message.tool_calls ?? []).entries()) {
    output.push({ type: 'function_call', id: `fc_${c.id}_${i}`, call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: 'completed' });
  }
  const usage = c.usage && {
    input_tokens: c.usage.prompt_tokens,
    output_tokens: c.usage.completion_tokens,
    total_tokens: c.usage.total_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  };
  return { id: `resp_${c.id}`, object: 'response', created_at: c.created, model: c.model, status, output: status === 'completed' ? output : [], usage: status === 'completed' ? usage : null, error: null };
}

/** Writes `reply` (a 200 completion) to `res` as the Responses API streams it. */
async function streamResponse(res: http.ServerResponse, reply: ModelReply): Promise<void> {
  const c = reply.body as Completion;
  const done = responseOf(c);
  let sequence = 0;
  const write = (type: string, data: Record<string, unknown>) =>
    !res.destroyed && res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...reply.headers });
  write('response.created', { response: responseOf(c, 'in_progress') });
  for (const [index, item] of (done.output as Record<string, unknown>[]).entries()) {
    if (item.type === 'message') {
      const text = (item.content as { text: string }[])[0]!.text;
      write('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      write('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      const pieces = reply.pieces ?? text.match(/\S+\s*|\s+/g) ?? [];
      for (const [i, piece] of pieces.entries()) {
        if (reply.holdBefore?.piece === i) await reply.holdBefore.until;
        if (i > 0 && reply.pieceDelayMs) await new Promise((r) => setTimeout(r, reply.pieceDelayMs));
        write('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta: piece, logprobs: [] });
      }
      write('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text, logprobs: [] });
      write('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
    } else {
      write('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
      write('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: item.arguments });
      write('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: item.arguments });
    }
    write('response.output_item.done', { output_index: index, item });
  }
  write('response.completed', { response: done });
  if (!res.destroyed) res.end();
}

export interface ModelServer {
  /** The base URL to configure as MODEL_BASE_URL (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Every request, in arrival order. */
  calls: ModelCall[];
  /** The requests made for one model. */
  callsFor: (model: string) => ModelCall[];
  /** `streaming: false`: the model refuses `stream: true` (400), as a provider without streaming does. */
  script: (model: string, script: ModelScript, options?: { streaming?: boolean }) => void;
}

export async function startModelServer(t: Cleanup): Promise<ModelServer> {
  const calls: ModelCall[] = [];
  const scripts = new Map<string, ModelScript>();
  const unstreamed = new Set<string>();
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const responsesApi = req.url === '/v1/responses';
      const send = (r: ModelReply, streamed = false, includeUsage = false) => {
        const ok = (r.status ?? 200) === 200;
        const text = JSON.stringify(ok && responsesApi ? responseOf(r.body as Completion) : r.body);
        setTimeout(() => {
          if (res.destroyed) return;
          if (streamed && ok) void (responsesApi ? streamResponse(res, r) : streamReply(res, r, includeUsage));
          else res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers }).end(text);
        }, r.delayMs ?? 0);
      };
      if (req.method !== 'POST' || (req.url !== '/v1/chat/completions' && !responsesApi)) return send(errorReply(404, `no route ${req.method} ${req.url}`));
      let body: ChatRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(errorReply(400, 'the body is not JSON'));
      }
      const call: ModelCall = { body, headers: req.headers };
      calls.push(call);
      res.on('close', () => {
        if (!res.writableEnded) call.aborted = true;
      });
      const script = scripts.get(body.model);
      if (!script) return send(errorReply(404, `The model \`${body.model}\` does not exist`));
      if (body.stream && unstreamed.has(body.model)) return send(errorReply(400, 'stream: streaming is not supported by this model'));
      const n = counts.get(body.model) ?? 0;
      counts.set(body.model, n + 1);
      send(script(call, n), body.stream === true, body.stream_options?.include_usage === true);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(
    t,
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    callsFor: (model) => calls.filter((c) => c.body.model === model),
    script: (model, script, options) => {
      scripts.set(model, script);
      if (options?.streaming === false) unstreamed.add(model);
      else unstreamed.delete(model);
    },
  };
}
