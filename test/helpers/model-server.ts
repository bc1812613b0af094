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
      const send = (r: ModelReply, streamed = false, includeUsage = false) => {
        const text = JSON.stringify(r.body);
        setTimeout(() => {
          if (res.destroyed) return;
          if (streamed && (r.status ?? 200) === 200) void streamReply(res, r, includeUsage);
          else res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers }).end(text);
        }, r.delayMs ?? 0);
      };
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return send(errorReply(404, `no route ${req.method} ${req.url}`));
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
