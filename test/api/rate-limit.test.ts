import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { startTestApp, type TestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

describe('auth rate limit, shared through Postgres', () => {
  const suite = suiteContext();
  let apps: TestApp[] = [];

  before(async () => {
    const limits = { AUTH_RATE_LIMIT_MAX: '10', AUTH_RATE_LIMIT_WINDOW_MS: '900000' };
    // Two API instances over one database, as behind a load balancer.
    const first = await startTestApp(suite, limits);
    const second = await startTestApp(suite, limits, first.database);
    apps = [first.app, second.app];
  });

  it('allows 10 auth requests per IP across instances, then 429 with Retry-After and RateLimit-* headers', async () => {
    const ip = '203.0.113.7';
    const codes: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await api(apps[i % 2]!, null, { remoteAddress: ip }).post('/api/auth/login', { email: 'x@example.com', password: 'whatever1' });
      codes.push(res.statusCode);
      assert.equal(res.headers['ratelimit-limit'], '10');
      assert.equal(res.headers['ratelimit-remaining'], String(9 - i));
    }
    assert.ok(codes.every((c) => c === 401), codes.join(','));

    for (const url of ['/api/auth/register', '/api/auth/login', '/api/auth/refresh', '/api/auth/logout']) {
      const res = await api(apps[1]!, null, { remoteAddress: ip }).post(url, { email: 'y@example.com', password: 'whatever1', refreshToken: 'x' });
      assert.equal(res.statusCode, 429, url);
      assert.deepEqual(Object.keys(res.json()), ['message']);
      const retryAfter = Number(res.headers['retry-after']);
      assert.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${res.headers['retry-after']}`);
      assert.equal(res.headers['ratelimit-limit'], '10');
      assert.equal(res.headers['ratelimit-remaining'], '0');
      assert.ok(Number(res.headers['ratelimit-reset']) > 0);
      assert.equal(res.headers['api-version'], '1');
    }

    // Another client IP has its own budget (x@example.com has spent its failed logins: see login-limit.test.ts);
    // non-auth endpoints are not limited.
    const other = await api(apps[0]!, null, { remoteAddress: '203.0.113.8' }).post('/api/auth/login', { email: 'z@example.com', password: 'whatever1' });
    assert.equal(other.statusCode, 401);
    const sameEmail = await api(apps[0]!, null, { remoteAddress: '203.0.113.8' }).post('/api/auth/login', { email: 'x@example.com', password: 'whatever1' });
    assert.equal(sameEmail.statusCode, 429);
    assert.match(sameEmail.json().message, /failed logins for this email/);
    for (let i = 0; i < 15; i++) {
      assert.equal((await api(apps[0]!, null, { remoteAddress: ip }).get('/api/health')).statusCode, 200);
    }
  });

  it('gives a successful refresh its slot back, so reloads never sign anyone out; a failed refresh still counts', async () => {
    const ip = '203.0.113.44';
    const client = (app: TestApp) => api(app, null, { remoteAddress: ip });
    const registered = await client(apps[0]!).post('/api/auth/register', { email: `refresher-${Date.now()}@example.com`, password: 'whatever1' });
    assert.equal(registered.statusCode, 201, registered.body);
    let token = registered.json().refreshToken as string;
    // Three times the budget of refreshes, across both instances: each one that succeeds gives its slot back.
    for (let i = 0; i < 30; i++) {
      const res = await client(apps[i % 2]!).post('/api/auth/refresh', { refreshToken: token });
      assert.equal(res.statusCode, 200, `refresh ${i + 1}: ${res.body}`);
      token = res.json().refreshToken;
    }
    // The register's slot and every failed refresh still count: 9 more fail, the next is refused.
    const codes: number[] = [];
    for (let i = 0; i < 10; i++) codes.push((await client(apps[i % 2]!).post('/api/auth/refresh', { refreshToken: 'rt_not-a-token' })).statusCode);
    assert.deepEqual(codes, [...Array(9).fill(401), 429]);
  });

  it('opens a new window once the old one has passed', async (t) => {
    // A window longer than any loaded machine needs for three logins (each hashes); it is then made to
    // have passed by moving its end into the past, as the clock would.
    const { app, db } = await startTestApp(t, { AUTH_RATE_LIMIT_MAX: '2', AUTH_RATE_LIMIT_WINDOW_MS: '600000' });
    const login = () => api(app, null, { remoteAddress: '198.51.100.1' }).post('/api/auth/login', { email: 'a@example.com', password: 'whatever1' });
    assert.equal((await login()).statusCode, 401);
    assert.equal((await login()).statusCode, 401);
    assert.equal((await login()).statusCode, 429);
    // The address's window and the email's (failed logins), both of this app's own database.
    const moved = await db.query(`UPDATE auth_rate_limits SET reset_at = now() - interval '1 millisecond' WHERE reset_at > now()`);
    assert.equal(moved.rowCount, 2, 'the address\'s window and the email\'s');
    assert.equal((await login()).statusCode, 401);
    assert.equal((await login()).statusCode, 401);
    assert.equal((await login()).statusCode, 429, 'the new window has the same bound');
  });
});
