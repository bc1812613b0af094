/** An API answer that was not a success: its status and the API's own `message`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The message the API sent (`{ message }`), or a plain one when the answer was not the API's (a proxy's page, a dropped connection). */
function messageOf(error: unknown, response: Response): string {
  if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message;
  return `The server answered ${response.status} ${response.statusText}`.trim();
}

/** The data of an openapi-fetch result, or an ApiError carrying the API's message. */
export function unwrap<T>(result: Result<T>): T {
  if (result.error !== undefined || !result.response.ok) {
    const retryAfter = Number(result.response.headers.get('Retry-After')) || undefined;
    throw new ApiError(result.response.status, messageOf(result.error, result.response), retryAfter);
  }
  return result.data as T;
}

/** What to tell a person about any error (an ApiError's message as the API wrote it). */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof TypeError) return 'Could not reach the API. Check your connection and try again.';
  return error instanceof Error ? error.message : String(error);
}

/** Where a 400's message (`body.configJson.endpoint: Invalid URL`) puts the blame: the field path after `body.`. */
export function fieldOfMessage(message: string): string | null {
  const match = /^body\.([\w.[\]-]+):/.exec(message);
  return match ? match[1]! : null;
}
