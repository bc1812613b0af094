import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onCleanup, type Cleanup } from './cleanup';

/**
 * A scripted OpenAI-compatible model provider on loopback: `POST /v1/chat/completions` answers what the
 * script says for each request — text, tool calls, errors (429 with Retry-After, 400, …), after an
 * optional delay. It stands in for the external provider only; everything else in a test is real.
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

export interface ModelServer {
  /** The base URL to configure as MODEL_BASE_URL (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Every request, in arrival order. */
  calls: ModelCall[];
  /** The requests made for one model. */
  callsFor: (model: string) => ModelCall[];
  script: (model: string, script: ModelScript) => void;
}

export async function startModelServer(t: Cleanup): Promise<ModelServer> {
  const calls: ModelCall[] = [];
  const scripts = new Map<string, ModelScript>();
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (r: ModelReply) => {
        const text = JSON.stringify(r.body);
        setTimeout(() => {
          if (!res.destroyed) res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers }).end(text);
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
      const n = counts.get(body.model) ?? 0;
      counts.set(body.model, n + 1);
      send(script(call, n));
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
    script: (model, script) => void scripts.set(model, script),
  };
}
