import { setTimeout as sleep } from 'node:timers/promises';

/** The public API over HTTP, as one user (or as nobody, for the public hooks). */
export class ApiClient {
  constructor(
    readonly base: string,
    private token = '',
  ) {}

  /** Throws unless the answer's status is in `expect`; answers the parsed body. */
  async request<T>(method: string, path: string, body?: unknown, expect = [200, 201, 202, 204], headers: Record<string, string> = {}): Promise<T> {
    const res = await fetch(this.base + path, {
      method,
      headers: { ...(this.token && { authorization: `Bearer ${this.token}` }), ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!expect.includes(res.status)) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Registers `email` and acts as that user from then on; answers the access token. */
  async register(email: string, password = 'bench-password'): Promise<string> {
    const { accessToken } = await this.request<{ accessToken: string }>('POST', '/api/auth/register', { email, password }, [201]);
    this.token = accessToken;
    return accessToken;
  }
}

/** POSTs JSON to `url` (a public hook), answers the status. */
export async function postStatus(url: string, body: unknown, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

/** Waits until `url` answers a status `ok` accepts (connection errors count as status 0). */
export async function waitForHttp(url: string, ok: (status: number) => boolean, timeoutMs: number, init?: RequestInit): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) }).then(
      async (r) => (await r.arrayBuffer(), r.status),
      () => 0,
    );
    if (ok(status)) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms (last status ${status})`);
    await sleep(250);
  }
}
