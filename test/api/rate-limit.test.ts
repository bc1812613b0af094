import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../api/app';
import { createTemporalClient } from '../../lib/temporal-client';
import { testConfig } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';

describe('auth rate limit, shared through Postgres', () => {
  let apps: Awaited<ReturnType<typeof buildApp>>[] = [];
  let cleanup: () => Promise<void>;

  before(async () => {
    const database = await createTestDatabase();
    const config = testConfig(database.url, { AUTH_RATE_LIMIT_MAX: '10', AUTH_RATE_LIMIT_WINDOW_MS: '900000' });
    const temporal = createTemporalClient(config);
    // Two API instances over one database, as behind a load balancer.
    apps = await Promise.all([0, 1].map(() => buildApp({ config, db: database.db, temporal, logger: false })));
    cleanup = async () => {
      await Promise.all(apps.map((a) => a.close()));
      await temporal.close();
      await database.drop();
    };
  });
  after(() => cleanup());

  it('allows 10 auth requests per IP across instances, then 429 with Retry-After and RateLimit-* headers', async () => {
    const ip = '203.0.113.7';
    const codes: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await apps[i % 2]!.inject({
        method: 'POST', url: '/api/auth/login', remoteAddress: ip, payload: { email: 'x@example.com', password: 'whatever1' },
      });
      codes.push(res.statusCode);
      assert.equal(res.headers['ratelimit-limit'], '10');
      assert.equal(res.headers['ratelimit-remaining'], String(9 - i));
    }
    assert.ok(codes.every((c) => c === 401), codes.join(','));

    for (const url of ['/api/auth/register', '/api/auth/login', '/api/auth/refresh', '/api/auth/logout']) {
      const res = await apps[1]!.inject({ method: 'POST', url, remoteAddress: ip, payload: { email: 'y@example.com', password: 'whatever1', refreshToken: 'x' } });
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
    const other = await apps[0]!.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '203.0.113.8', payload: { email: 'z@example.com', password: 'whatever1' } });
    assert.equal(other.statusCode, 401);
    const sameEmail = await apps[0]!.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '203.0.113.8', payload: { email: 'x@example.com', password: 'whatever1' } });
    assert.equal(sameEmail.statusCode, 429);
    assert.match(sameEmail.json().message, /failed logins for this email/);
    for (let i = 0; i < 15; i++) {
      assert.equal((await apps[0]!.inject({ method: 'GET', url: '/api/health', remoteAddress: ip })).statusCode, 200);
    }
  });

  it('opens a new window once the old one has passed', async () => {
    const database = await createTestDatabase();
    const config = testConfig(database.url, { AUTH_RATE_LIMIT_MAX: '2', AUTH_RATE_LIMIT_WINDOW_MS: '1000' });
    const temporal = createTemporalClient(config);
    const app = await buildApp({ config, db: database.db, temporal, logger: false });
    try {
      const login = () => app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '198.51.100.1', payload: { email: 'a@example.com', password: 'whatever1' } });
      assert.equal((await login()).statusCode, 401);
      assert.equal((await login()).statusCode, 401);
      assert.equal((await login()).statusCode, 429);
      await new Promise((r) => setTimeout(r, 1100)); // the window configured for this test is 1 s
      assert.equal((await login()).statusCode, 401);
    } finally {
      await app.close();
      await temporal.close();
      await database.drop();
    }
  });
});
