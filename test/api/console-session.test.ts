import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api, type ApiResponse } from '../helpers/api';
import { startTestApp, type TestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

let ip = 0;
const fromNewIp = () => `10.9.${Math.floor(++ip / 250)}.${ip % 250}`;

const CONSOLE = { 'x-client': 'console' };

/** The ap_refresh cookie a response sets: its value and attributes (lower-cased names). */
function refreshCookie(res: ApiResponse): { value: string; attributes: Record<string, string | true> } | undefined {
  const header = res.headers['set-cookie'];
  const line = [header].flat().find((c): c is string => typeof c === 'string' && c.startsWith('ap_refresh='));
  if (!line) return undefined;
  const [pair, ...rest] = line.split(';').map((part) => part.trim());
  const attributes = Object.fromEntries(
    rest.map((part) => {
      const [name, ...value] = part.split('=');
      return [name!.toLowerCase(), value.length ? value.join('=') : true] as const;
    }),
  );
  return { value: decodeURIComponent(pair!.slice('ap_refresh='.length)), attributes };
}

/**
 * The console's cookie mode (docs/api.md § Authentication and tokens, *The console's session*): with `X-Client: console` the refresh token
 * lives in an HttpOnly, SameSite=Strict cookie scoped to /api/auth and never in a body; refresh and logout read
 * it only when the request also carries that header.
 */
describe('auth: the console cookie mode', () => {
  const suite = suiteContext();
  let app: TestApp;

  before(async () => {
    ({ app } = await startTestApp(suite));
  });

  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => api(app, null, { remoteAddress: fromNewIp() }).post(url, payload, headers);
  const withCookie = (token: string, headers: Record<string, string> = CONSOLE) => ({ ...headers, cookie: `ap_refresh=${encodeURIComponent(token)}` });
  let counter = 0;
  const email = () => `console${++counter}-${Date.now()}@example.com`;

  it('login and register with X-Client: console set the cookie (HttpOnly, SameSite=Strict, Path=/api/auth) and leave the token out of the body', async () => {
    const address = email();
    const registered = await post('/api/auth/register', { email: address, password: 'longenough' }, CONSOLE);
    assert.equal(registered.statusCode, 201, registered.body);
    assert.equal('refreshToken' in registered.json(), false, 'no refresh token in the body');
    assert.ok(registered.json().accessToken);
    const cookie = refreshCookie(registered);
    assert.ok(cookie, 'register set ap_refresh');
    assert.match(cookie.value, /^rt_/);
    assert.equal(cookie.attributes.httponly, true);
    assert.equal(cookie.attributes.samesite, 'Strict');
    assert.equal(cookie.attributes.path, '/api/auth');
    assert.equal(Number(cookie.attributes['max-age']), 30 * 86_400);

    const login = await post('/api/auth/login', { email: address, password: 'longenough' }, CONSOLE);
    assert.equal(login.statusCode, 200, login.body);
    assert.equal('refreshToken' in login.json(), false);
    assert.match(refreshCookie(login)?.value ?? '', /^rt_/);
    assert.notEqual(refreshCookie(login)?.value, cookie.value, 'each sign-in has its own token');
  });

  it('the cookie is Secure unless the console is served over loopback http', async () => {
    const address = email();
    await post('/api/auth/register', { email: address, password: 'longenough' });
    const cases: Array<[host: string, secure: boolean]> = [
      ['localhost:3000', false],
      ['127.0.0.1:3000', false],
      ['[::1]:3000', false],
      ['console.example.com', true],
      ['192.168.1.20:3000', true],
    ];
    for (const [host, secure] of cases) {
      const res = await post('/api/auth/login', { email: address, password: 'longenough' }, { ...CONSOLE, host });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(refreshCookie(res)?.attributes.secure === true, secure, `Secure over http://${host}`);
    }
  });

  it('over https (per X-Forwarded-Proto from a trusted proxy) the cookie is __Host-ap_refresh, Secure, Path=/, no Domain; only that name is read', async (t) => {
    const { app: proxied } = await startTestApp(t, { TRUST_PROXY: '10.0.0.0/8' });
    const via = (headers: Record<string, string>) => ({ ...CONSOLE, 'x-forwarded-proto': 'https', host: 'console.example.com', ...headers });
    const send = (url: string, payload: unknown, headers: Record<string, string>) => api(proxied, null, { remoteAddress: fromNewIp() }).post(url, payload, headers);
    const registered = await send('/api/auth/register', { email: email(), password: 'longenough' }, via({}));
    assert.equal(registered.statusCode, 201, registered.body);
    const line = [registered.headers['set-cookie']].flat().find((c): c is string => typeof c === 'string' && c.startsWith('__Host-ap_refresh='));
    assert.ok(line, `set __Host-ap_refresh: ${String(registered.headers['set-cookie'])}`);
    assert.equal(refreshCookie(registered), undefined, 'no ap_refresh over https');
    const attributes = line.split(';').slice(1).map((p) => p.trim().toLowerCase());
    assert.ok(attributes.includes('secure') && attributes.includes('path=/') && attributes.includes('httponly'), line);
    assert.ok(!attributes.some((a) => a.startsWith('domain=')), line);
    const token = decodeURIComponent(line.split(';')[0]!.slice('__Host-ap_refresh='.length));
    // A planted ap_refresh (a sibling subdomain can set that name) is not read over https.
    const planted = await send('/api/auth/refresh', {}, via({ cookie: `ap_refresh=${encodeURIComponent(token)}` }));
    assert.equal(planted.statusCode, 401, planted.body);
    const refreshed = await send('/api/auth/refresh', {}, via({ cookie: `__Host-ap_refresh=${encodeURIComponent(token)}` }));
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    // From an address the proxy setting does not trust, X-Forwarded-Proto is ignored: plain http, ap_refresh.
    const direct = await api(proxied, null, { remoteAddress: '192.0.2.7' }).post('/api/auth/register', { email: email(), password: 'longenough' }, via({}));
    assert.equal(direct.statusCode, 201, direct.body);
    assert.ok(refreshCookie(direct), 'an untrusted X-Forwarded-Proto keeps ap_refresh');
  });

  it('without X-Client: console nothing changes: the token is in the body and no cookie is set', async () => {
    const res = await post('/api/auth/register', { email: email(), password: 'longenough' });
    assert.equal(res.statusCode, 201);
    assert.match(res.json().refreshToken, /^rt_/);
    assert.equal(refreshCookie(res), undefined);
    const refreshed = await post('/api/auth/refresh', { refreshToken: res.json().refreshToken });
    assert.equal(refreshed.statusCode, 200);
    assert.match(refreshed.json().refreshToken, /^rt_/);
    assert.equal(refreshCookie(refreshed), undefined);
  });

  it('refresh reads the cookie, rotates it, and a spent cookie revokes the family and is cleared', async () => {
    const first = refreshCookie(await post('/api/auth/register', { email: email(), password: 'longenough' }, CONSOLE))!.value;
    const refreshed = await post('/api/auth/refresh', {}, withCookie(first));
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.deepEqual(Object.keys(refreshed.json()).sort(), ['accessToken', 'expiresIn']);
    const second = refreshCookie(refreshed)!.value;
    assert.notEqual(second, first);
    assert.equal((await api(app, refreshed.json().accessToken).get('/api/auth/me')).statusCode, 200);

    // The first cookie again (stolen, replayed): the family is revoked, and the console's cookie cleared.
    const replayed = await post('/api/auth/refresh', {}, withCookie(first));
    assert.equal(replayed.statusCode, 401);
    assert.deepEqual(Object.keys(replayed.json()), ['message']);
    const cleared = refreshCookie(replayed);
    assert.equal(cleared?.value, '');
    assert.equal(cleared?.attributes.path, '/api/auth');
    assert.equal((await post('/api/auth/refresh', {}, withCookie(second))).statusCode, 401, 'the family is revoked');
  });

  it('the cookie alone is not enough: without X-Client: console refresh and logout never read it', async () => {
    const token = refreshCookie(await post('/api/auth/register', { email: email(), password: 'longenough' }, CONSOLE))!.value;
    const refreshed = await post('/api/auth/refresh', {}, withCookie(token, {}));
    assert.equal(refreshed.statusCode, 401, refreshed.body);
    assert.match(refreshed.json().message, /^No refresh token/);
    assert.equal(refreshCookie(refreshed), undefined, 'no cookie is set or cleared for a request that is not the console\'s');
    // A forged logout (the cookie, no header) revokes nothing.
    assert.equal((await post('/api/auth/logout', {}, withCookie(token, {}))).statusCode, 204);
    // Another X-Client value is not the console either.
    assert.equal((await post('/api/auth/refresh', {}, withCookie(token, { 'x-client': 'other' }))).statusCode, 401);
    // Still valid: nothing above used it.
    assert.equal((await post('/api/auth/refresh', {}, withCookie(token))).statusCode, 200);
  });

  it('no token anywhere: refresh is a 401 with a message (never a 400 or a 500), logout a 204 that revokes nothing', async () => {
    for (const headers of [CONSOLE, {}]) {
      const res = await post('/api/auth/refresh', {}, headers);
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { message: 'No refresh token: send refreshToken, or X-Client: console with the ap_refresh cookie' });
      assert.equal((await post('/api/auth/logout', {}, headers)).statusCode, 204);
    }
  });

  it('logout reads the cookie, revokes its family and clears the cookie', async () => {
    const token = refreshCookie(await post('/api/auth/register', { email: email(), password: 'longenough' }, CONSOLE))!.value;
    const out = await post('/api/auth/logout', {}, withCookie(token));
    assert.equal(out.statusCode, 204);
    const cleared = refreshCookie(out);
    assert.equal(cleared?.value, '');
    assert.ok(cleared && (cleared.attributes['max-age'] === '0' || typeof cleared.attributes.expires === 'string'));
    assert.equal((await post('/api/auth/refresh', {}, withCookie(token))).statusCode, 401, 'the token no longer refreshes');
    // A console logout with no cookie at all is still a 204 (nothing to revoke).
    assert.equal((await post('/api/auth/logout', {}, CONSOLE)).statusCode, 204);
  });

  it('a body token still wins in console mode (scripts that set the header keep working)', async () => {
    const res = await post('/api/auth/register', { email: email(), password: 'longenough' });
    const refreshed = await post('/api/auth/refresh', { refreshToken: res.json().refreshToken }, withCookie('rt_not-this-one'));
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal('refreshToken' in refreshed.json(), false);
    assert.match(refreshCookie(refreshed)?.value ?? '', /^rt_/);
  });
});
