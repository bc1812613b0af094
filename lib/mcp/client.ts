import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError as ProtocolError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { LookupsBusyError } from '../network';
import { OutboundError } from '../outbound-http';
import { guardedFetch } from './fetch';

/**
 * Our side of an MCP server (docs/api.md § MCP tools): each operation — listing the server's functions, or one
 * `tools/call` — is one short session of the official SDK's Client over Streamable HTTP: connect and
 * initialize, the request(s), then the session ended (DELETE when the server gave one) and every socket
 * closed. Nothing is kept open between operations, so a server holds nothing of ours between calls and a
 * step resumed on another worker needs nothing from the first.
 *
 * Bounds: the whole operation within `timeoutMs` (TOOL_TIMEOUT_MS), each HTTP answer within
 * MAX_ANSWER_BYTES (guarded fetch), at most MAX_LIST_PAGES pages of at most MAX_FUNCTIONS functions in
 * all. Every request goes through lib/outbound-http.ts's checks (private targets, pinned addresses).
 * Failures are McpFailure, whose `kind` says what went wrong and whose message says it in words fit to
 * show (a 502's message, a step's error).
 */

/** What one MCP server is: its Streamable HTTP endpoint and the headers sent with every request. */
export interface McpServerTarget {
  url: string;
  headers?: Record<string, string>;
}

export interface McpCallOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  dnsServers: readonly string[] | null;
  /** Whose share of name lookups the operation takes (an API request's account); null for the engine's. */
  accountId: string | null;
  /** Stops the operation (a cancelled step). */
  signal?: AbortSignal;
}

/** One function an MCP server offers, as it lists it. */
export interface McpFunction {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** Each HTTP answer of a server is read up to this size; past it the operation fails, naming the limit. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
/** A listing reads at most this many pages (`nextCursor`), and keeps at most MAX_FUNCTIONS functions. */
export const MAX_LIST_PAGES = 50;
export const MAX_FUNCTIONS = 1000;

export type McpFailureKind = 'unreachable' | 'initialize' | 'protocol' | 'timeout' | 'too_large' | 'aborted' | 'busy';

export class McpFailure extends Error {
  constructor(
    readonly kind: McpFailureKind,
    message: string,
  ) {
    super(message);
  }
}

/** The SDK compiles each listed tool's outputSchema to check results against it; we read text and check nothing, so compile nothing a stranger wrote. */
const acceptEveryOutput: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

/** The server's error text, short: JSON-RPC errors and HTTP bodies are written by the server. */
const short = (text: string, max = 500) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** An HTTP refusal as `HTTP 404: Cannot POST /nope`: the status, then the body's words (tags and spacing dropped), short. */
function httpRefusal(err: StreamableHTTPError): string {
  const body = err.message
    .replace(/^Streamable HTTP error: /, '')
    .replace(/^Error POSTing to endpoint: /, '')
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const status = err.code && err.code > 0 ? `HTTP ${err.code}` : '';
  return [status, short(body, 200)].filter(Boolean).join(': ');
}

/** The words of a failure, by what was being done when it happened. */
function classify(err: unknown, stage: 'connect' | 'work', reason: unknown, timeoutMs: number): McpFailure {
  if (reason instanceof McpFailure) return reason;
  if (err instanceof McpFailure) return err;
  if (err instanceof LookupsBusyError) return new McpFailure('busy', err.message);
  if (err instanceof OutboundError) {
    // The SDK passes our fetch's errors through as they are.
    return new McpFailure('unreachable', `the MCP server could not be reached: ${err.message}`);
  }
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ProtocolError && err.code === -32001 /* RequestTimeout */) {
    return new McpFailure('timeout', `the MCP server did not answer within ${timeoutMs} ms (TOOL_TIMEOUT_MS)`);
  }
  if (stage === 'connect') {
    if (err instanceof StreamableHTTPError) return new McpFailure('initialize', `the MCP server refused to initialize: ${httpRefusal(err)}`);
    if (err instanceof ProtocolError) return new McpFailure('initialize', `the MCP server refused to initialize: ${short(message)}`);
    if (/protocol version is not supported/.test(message)) return new McpFailure('initialize', `the MCP server refused to initialize: ${short(message)}`);
  }
  if (err instanceof StreamableHTTPError) return new McpFailure('protocol', `the MCP server answered with a protocol error: ${httpRefusal(err)}`);
  if (err instanceof ProtocolError) return new McpFailure('protocol', `the MCP server answered with a protocol error: ${short(message)}`);
  // A reply that is not JSON-RPC, or a result of the wrong shape (the SDK's schemas refuse it).
  return new McpFailure('protocol', `the MCP server answered with a protocol error: ${short(message)}`);
}

/**
 * Runs `work` in one session with the server; the operation (session included) ends within timeoutMs.
 * Exported for the tests' own servers; callers use listFunctions and callFunction.
 */
export async function withMcpSession<T>(
  server: McpServerTarget,
  opts: McpCallOptions,
  work: (client: Client, request: { signal: AbortSignal; timeout: number }) => Promise<T>,
): Promise<T> {
  const stop = new AbortController();
  const timer = setTimeout(
    () => stop.abort(new McpFailure('timeout', `the MCP server did not answer within ${opts.timeoutMs} ms (TOOL_TIMEOUT_MS)`)),
    opts.timeoutMs,
  );
  const cancelled = () => stop.abort(new McpFailure('aborted', 'the call was stopped (the step was cancelled)'));
  if (opts.signal?.aborted) cancelled();
  opts.signal?.addEventListener('abort', cancelled, { once: true });
  const fetch = guardedFetch({
    allowPrivate: opts.allowPrivate,
    dnsServers: opts.dnsServers,
    accountId: opts.accountId,
    maxResponseBytes: MAX_ANSWER_BYTES,
    signal: stop.signal,
    tooLarge: () => stop.abort(new McpFailure('too_large', `the MCP server's answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB; it was not read further`)),
  });
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    fetch,
    requestInit: { headers: server.headers ?? {} },
    // A dropped stream is not reconnected: an operation either completes within its time or fails.
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
  });
  const client = new Client({ name: 'agent-platform', version: '1' }, { capabilities: {}, jsonSchemaValidator: acceptEveryOutput });
  // The transport reports errors of background streams here too (a GET stream refused): the request that
  // needs an answer fails on its own, so these are not the operation's.
  client.onerror = () => {};
  const request = { signal: stop.signal, timeout: opts.timeoutMs };
  let stage: 'connect' | 'work' = 'connect';
  try {
    if (stop.signal.aborted) throw stop.signal.reason;
    await client.connect(transport, request);
    stage = 'work';
    const result = await work(client, request);
    // The session is ended as the server asks (a DELETE), within the operation's time; a server that does
    // not take it loses nothing of ours.
    if (transport.sessionId) await transport.terminateSession().catch(() => {});
    return result;
  } catch (err) {
    throw classify(err, stage, stop.signal.reason, opts.timeoutMs);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', cancelled);
    // Every request still open (a GET stream, a hung POST) is torn down with the transport's and ours.
    if (!stop.signal.aborted) stop.abort(new McpFailure('aborted', 'the session ended'));
    await client.close().catch(() => {});
  }
}

/** What the server lists (`tools/list`, every page), in its order. */
export async function listFunctions(server: McpServerTarget, opts: McpCallOptions): Promise<McpFunction[]> {
  return withMcpSession(server, opts, async (client, request) => {
    const functions: McpFunction[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      const result = await client.listTools(cursor === undefined ? undefined : { cursor }, request);
      for (const tool of result.tools) {
        functions.push({ name: tool.name, description: tool.description ?? tool.title ?? '', inputSchema: tool.inputSchema as Record<string, unknown> });
      }
      if (functions.length > MAX_FUNCTIONS) throw new McpFailure('protocol', `the MCP server lists more than ${MAX_FUNCTIONS} functions; at most ${MAX_FUNCTIONS} are read`);
      cursor = result.nextCursor;
      if (cursor === undefined) return functions;
      if (seen.has(cursor)) throw new McpFailure('protocol', 'the MCP server answered with a protocol error: its tools/list pages repeat (the same nextCursor twice)');
      seen.add(cursor);
      if (page >= MAX_LIST_PAGES) throw new McpFailure('protocol', `the MCP server lists more than ${MAX_LIST_PAGES} pages of functions; at most ${MAX_LIST_PAGES} are read`);
    }
  });
}

/** One `tools/call`: the server's result as it sent it (`isError` included). */
export async function callFunction(server: McpServerTarget, name: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<CallToolResult> {
  return withMcpSession(server, opts, async (client, request) => (await client.callTool({ name, arguments: args }, undefined, request)) as CallToolResult);
}
