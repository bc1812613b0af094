import { createHash } from 'node:crypto';
import { listFunctions, McpFailure, type McpCallOptions, type McpFunction, type McpServerTarget } from './client';

/**
 * What an `mcp` tool offers (docs/api.md § MCP tools): its server's functions, kept per tool for MCP_LIST_TTL
 * in each process (the API's `GET /api/tools/:id/functions` and a worker's model steps each keep their own),
 * filtered by the tool's allow-list, and each named for a model run as `<tool name>_<function name>`.
 */

/** An `mcp` tool's stored config (api/schemas/tools.ts mcpConfig), secret headers opened. */
export interface McpToolConfig {
  url: string;
  headers?: Record<string, string>;
  /** The allow-list of the server's function names; absent: all it lists. */
  functions?: string[];
}

/** The functions the tool offers: those the server lists, only the allow-list's when it has one. */
export function allowedFunctions(listed: readonly McpFunction[], config: Pick<McpToolConfig, 'functions'>): McpFunction[] {
  if (!config.functions) return [...listed];
  const allowed = new Set(config.functions);
  return listed.filter((f) => allowed.has(f.name));
}

/**
 * The name a model calls a function by (docs/api.md § MCP tools): `<tool name>_<function name>`, each character outside
 * `[A-Za-z0-9_-]` made `_`, at most 64 characters, and unique in the run (`_2`, `_3` … when taken).
 */
export function mcpFunctionName(toolName: string, functionName: string, taken: Set<string>): string {
  const base = `${toolName}_${functionName}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  let candidate = base;
  for (let n = 2; taken.has(candidate); n++) candidate = `${base.slice(0, 64 - String(n).length - 1)}_${n}`;
  taken.add(candidate);
  return candidate;
}

/** Tools whose lists one process keeps at once (the oldest go first). */
const MAX_KEPT = 2000;

interface Kept {
  at: number;
  functions: McpFunction[];
}

/**
 * The lists a process keeps, by tool and by what the listing depends on (URL and headers: an edit lists
 * again). One listing per tool at a time: callers asking meanwhile wait for it. Only a listing that
 * worked is kept; a failure is the answer of the callers that waited for it, and the next one asks again.
 */
export function createFunctionLists(ttlMs: () => number) {
  const kept = new Map<string, Kept>();
  const inFlight = new Map<string, Promise<McpFunction[]>>();

  const keyOf = (toolId: string, server: McpServerTarget) =>
    `${toolId}:${createHash('sha256').update(JSON.stringify([server.url, Object.entries(server.headers ?? {}).sort()])).digest('base64url')}`;

  /** Waits for `work` unless `signal` aborts first (the listing goes on for the others waiting on it). */
  const until = <T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> => {
    if (!signal) return work;
    if (signal.aborted) return Promise.reject(new McpFailure('aborted', 'the call was stopped (the step was cancelled)'));
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(new McpFailure('aborted', 'the call was stopped (the step was cancelled)'));
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  };

  return {
    /**
     * What the server of tool `toolId` lists, from what is kept when younger than MCP_LIST_TTL. The listing
     * itself runs without `opts.signal` (others may wait for it); the caller stops waiting when it aborts.
     */
    async list(toolId: string, server: McpServerTarget, opts: McpCallOptions): Promise<McpFunction[]> {
      const key = keyOf(toolId, server);
      const hit = kept.get(key);
      if (hit && Date.now() - hit.at < ttlMs()) return hit.functions;
      let load = inFlight.get(key);
      if (!load) {
        load = listFunctions(server, { ...opts, signal: undefined }).then((functions) => {
          kept.delete(key);
          kept.set(key, { at: Date.now(), functions });
          if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value!);
          return functions;
        });
        inFlight.set(key, load);
        void load.finally(() => inFlight.delete(key)).catch(() => {});
      }
      return until(load, opts.signal);
    },
    /** Listings running now (for the API's per-account bound and for tests). */
    inFlight: () => inFlight.size,
  };
}
export type FunctionLists = ReturnType<typeof createFunctionLists>;

