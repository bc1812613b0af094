import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';
import { ensureFreshToken, currentAccessToken, refreshSession } from '../session/session';

export type Schemas = components['schemas'];

/**
 * The account requests act in (the Account-Id header). Set by the workspace layout from its URL before its
 * screens render (shell/WorkspaceLayout.tsx), so every request a screen makes goes to the account its URL names.
 */
let actingAccountId: string | null = null;
export function setActingAccount(accountId: string | null): void {
  actingAccountId = accountId;
}

const AUTH_PATHS = /^\/api\/auth\/(login|register|refresh|logout)$/;
/** The caller's own things, which act in no account: no Account-Id (a stale one would 404 them). */
const SELF_PATHS = /^\/api\/(accounts|settings|invitations|auth)(\/|$)/;
/** A request's copy, kept to send again once after a silent refresh (a 401 from an expired token). */
const retries = new WeakMap<Request, Request>();

const credentials: Middleware = {
  async onRequest({ request }) {
    const url = new URL(request.url);
    if (AUTH_PATHS.test(url.pathname)) {
      request.headers.set('X-Client', 'console');
      return request;
    }
    const token = await ensureFreshToken();
    if (token) request.headers.set('Authorization', `Bearer ${token}`);
    if (actingAccountId && !SELF_PATHS.test(url.pathname)) request.headers.set('Account-Id', actingAccountId);
    retries.set(request, request.clone());
    return request;
  },
  async onResponse({ request, response }) {
    const copy = retries.get(request);
    if (response.status !== 401 || !copy) return response;
    // The token may have expired while the tab slept: refresh once and send the request again.
    const sent = currentAccessToken();
    if (!(await refreshSession()) || currentAccessToken() === sent) return response;
    const again = new Request(copy, { headers: new Headers(copy.headers) });
    again.headers.set('Authorization', `Bearer ${currentAccessToken()}`);
    return fetch(again);
  },
};

/** The one client: typed by the API's own OpenAPI document (schema.d.ts, `npm run gen:api`). */
export const client = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
client.use(credentials);
