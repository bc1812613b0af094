import { toolRequest } from './http';
import { valueAtPath } from '../../../lib/json-path';

/** A custom tool's stored config (api/schemas/tools.ts customConfig), secret headers opened. */
export interface CustomToolConfig {
  endpoint: string;
  method: string;
  headers?: Record<string, string>;
  bodyTemplate?: string;
  responseMapping?: Record<string, string>;
}

const PLACEHOLDER = /\{\{\s*(input(?:\.[A-Za-z0-9_$-]+)*)\s*\}\}/g;

/**
 * Fills a bodyTemplate from the run input. Placeholders:
 * - `{{input}}`: the whole input, as JSON;
 * - `{{input.a.b}}` (dotted path, a numeric segment indexes an array): the value at that path, as JSON
 *   (`null` when the path is missing).
 * Values are always inserted JSON-encoded (a string keeps its quotes), so `{"q": {{input.query}}}`
 * stays valid JSON whatever the input holds. Spaces inside the braces are allowed; any other `{{…}}`
 * is left as written.
 */
export function fillTemplate(template: string, input: unknown): string {
  return template.replace(PLACEHOLDER, (_match, path: string) => {
    const value = path === 'input' ? input : valueAtPath(input, path.slice('input.'.length));
    return JSON.stringify(value ?? null);
  });
}

/**
 * responseMapping `{ outKey: "dotted.path" }` → `{ outKey: value at that path of the JSON response }`
 * (null when missing). Without a mapping the result is the whole response: parsed JSON, or the text.
 */
export function mapResponse(response: unknown, mapping: Record<string, string> | undefined): unknown {
  if (!mapping || Object.keys(mapping).length === 0) return response;
  return Object.fromEntries(Object.entries(mapping).map(([key, path]) => [key, valueAtPath(response, path) ?? null]));
}

const hasHeader = (headers: Record<string, string>, name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);

/**
 * Calls the endpoint with the method and headers as configured. The filled bodyTemplate is sent with
 * every method but GET; without a Content-Type header it goes as application/json when it parses as
 * JSON, as text/plain otherwise.
 */
export async function runCustomTool(
  config: CustomToolConfig,
  input: unknown,
  opts: { timeoutMs: number; allowPrivate: boolean; dnsServers: readonly string[] | null; signal?: AbortSignal },
): Promise<unknown> {
  const headers = { ...(config.headers ?? {}) };
  let body: string | undefined;
  if (config.bodyTemplate !== undefined && config.method !== 'GET') {
    body = fillTemplate(config.bodyTemplate, input);
    if (!hasHeader(headers, 'content-type')) headers['content-type'] = isJson(body) ? 'application/json' : 'text/plain; charset=utf-8';
  }
  const response = await toolRequest({ url: config.endpoint, method: config.method, headers, body, ...opts });
  return mapResponse(response, config.responseMapping);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
