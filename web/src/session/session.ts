import { useSyncExternalStore } from 'react';
import type { components } from '../api/schema';
import { ApiError } from '../api/errors';

type Schemas = components['schemas'];

/**
 * The signed-in session (docs/console.md § Auth). The access token lives in this module's memory only;
 * the refresh token is the HttpOnly cookie ap_refresh, which no script can read, so a reload signs in again
 * through POST /api/auth/refresh. Nothing is written to localStorage or sessionStorage.
 */
export type Session =
  | { status: 'loading' }
  | { status: 'signedOut'; message?: string }
  | { status: 'signedIn'; accessToken: string; expiresAt: number };

let session: Session = { status: 'loading' };
const listeners = new Set<() => void>();
let refreshTimer: ReturnType<typeof setTimeout> | undefined;

function setSession(next: Session): void {
  session = next;
  clearTimeout(refreshTimer);
  if (next.status === 'signedIn') {
    // A minute before it expires (never sooner than in 5 s), the token is refreshed in the background.
    refreshTimer = setTimeout(() => void refreshSession(), Math.max(5_000, next.expiresAt - Date.now() - 60_000));
  }
  listeners.forEach((listener) => listener());
}

export function useSession(): Session {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => session,
  );
}

export function currentAccessToken(): string | null {
  return session.status === 'signedIn' ? session.accessToken : null;
}

/** Called when a session ends (sign-out, a refused refresh): the app drops every cached answer. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

async function post<T>(path: string, body: unknown): Promise<{ status: number; data: T | null; message: string | null; retryAfter?: number }> {
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Client': 'console' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // Not the API's answer (a proxy's error page): the status says what happened.
  }
  if (res.ok) return { status: res.status, data: json as T, message: null };
  const message = (json as { message?: string } | null)?.message ?? `The server answered ${res.status}`;
  return { status: res.status, data: null, message, retryAfter: Number(res.headers.get('Retry-After')) || undefined };
}

function signedIn(tokens: { accessToken: string; expiresIn: number }): void {
  setSession({ status: 'signedIn', accessToken: tokens.accessToken, expiresAt: Date.now() + tokens.expiresIn * 1000 });
}

let refreshing: Promise<boolean> | null = null;

/**
 * Exchanges the cookie for a new access token (and a rotated cookie). Tabs of the console take turns
 * (a Web Lock): two tabs presenting the same cookie at once would look like a stolen token and revoke the
 * family. True when signed in afterwards.
 */
export function refreshSession(): Promise<boolean> {
  refreshing ??= (async () => {
    const run = async () => {
      try {
        const res = await post<Schemas['TokenPair']>('/api/auth/refresh', {});
        if (res.data) {
          signedIn(res.data);
          return true;
        }
        const wasSignedIn = session.status === 'signedIn';
        setSession({ status: 'signedOut', message: wasSignedIn || res.status === 429 ? (res.message ?? undefined) : undefined });
        if (wasSignedIn) onSignedOut();
        return false;
      } catch {
        // The API is unreachable: keep what we have; the next request says so.
        if (session.status === 'loading') setSession({ status: 'signedOut', message: 'Could not reach the API. Check your connection and reload.' });
        return false;
      }
    };
    return navigator.locks ? navigator.locks.request('ap-refresh', run) : run();
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/** The access token, refreshed first when it expires within 10 s (timers sleep with the tab). */
export async function ensureFreshToken(): Promise<string | null> {
  if (session.status === 'signedIn' && session.expiresAt - Date.now() < 10_000) await refreshSession();
  return currentAccessToken();
}

export async function signIn(email: string, password: string): Promise<void> {
  const res = await post<Schemas['Session']>('/api/auth/login', { email, password });
  if (!res.data) throw new ApiError(res.status, res.message ?? 'Sign-in failed', res.retryAfter);
  signedIn(res.data);
}

export async function createAccount(email: string, password: string, name?: string): Promise<void> {
  const res = await post<Schemas['Session']>('/api/auth/register', { email, password, ...(name ? { name } : {}) });
  if (!res.data) throw new ApiError(res.status, res.message ?? 'Could not create the account', res.retryAfter);
  signedIn(res.data);
}

/** Revokes the session's refresh family, clears the cookie, and forgets everything fetched. */
export async function signOut(): Promise<void> {
  await post('/api/auth/logout', {}).catch(() => undefined);
  setSession({ status: 'signedOut' });
  onSignedOut();
}

/** At start-up: the cookie (if any) is the session. */
export function restoreSession(): Promise<boolean> {
  return refreshSession();
}
