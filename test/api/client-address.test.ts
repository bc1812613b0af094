import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { startTestApp, type TestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { testEnv } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { startProcess } from '../helpers/processes';

/**
 * Who the client is decides whose auth budget a request spends (docs/api.md § Rate limits). Each request below is a
 * logout with an unknown token (cheap, 204), and `RateLimit-Remaining` tells which budget it spent.
 * The apps share one database, so each test uses its own addresses.
 */
describe('client address: TRUST_PROXY and the auth rate-limit key', () => {
  const MAX = 50;
  const suite = suiteContext();
  let database: TestDatabase;

  before(async () => {
    database = await createTestDatabase(suite);
  });

  async function appTrusting(trustProxy: string): Promise<TestApp> {
    return (await startTestApp(suite, { TRUST_PROXY: trustProxy, AUTH_RATE_LIMIT_MAX: String(MAX) }, database)).app;
  }

  /** How many requests are left in the budget this request spent from. */
  async function remainingAfter(app: TestApp, remoteAddress: string, forwardedFor?: string): Promise<number> {
    const res = await api(app, null, { remoteAddress }).post('/api/auth/logout', { refreshToken: 'rt_unknown' }, forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor });
    assert.equal(res.statusCode, 204, res.body);
    return Number(res.headers['ratelimit-remaining']);
  }

  it('with a hop count of 1 keys on the address the proxy saw; a spoofed left-most entry changes nothing', async () => {
    const app = await appTrusting('1');
    const proxy = '10.20.0.1';
    assert.equal(await remainingAfter(app, proxy, '198.51.100.10'), MAX - 1);
    assert.equal(await remainingAfter(app, proxy, '6.6.6.6, 198.51.100.10'), MAX - 2, 'spoofed left-most entry');
    assert.equal(await remainingAfter(app, proxy, '7.7.7.7, 8.8.8.8, 198.51.100.10'), MAX - 3, 'two spoofed entries');
    // Another client through the same proxy has a budget of its own, and so does the proxy itself.
    assert.equal(await remainingAfter(app, proxy, '198.51.100.11'), MAX - 1);
    assert.equal(await remainingAfter(app, proxy), MAX - 1);
  });

  it('with a hop count of 2 skips both proxies and no further', async () => {
    const app = await appTrusting('2');
    const outer = '198.51.100.200';
    assert.equal(await remainingAfter(app, '10.21.0.1', `198.51.100.12, ${outer}`), MAX - 1);
    assert.equal(await remainingAfter(app, '10.21.0.2', `6.6.6.6, 198.51.100.12, ${outer}`), MAX - 2);
  });

  it('with a list of trusted proxies keys on the first untrusted address; an untrusted peer keeps its own', async () => {
    const app = await appTrusting('10.22.0.0/16, 192.0.2.9');
    assert.equal(await remainingAfter(app, '10.22.0.1', '198.51.100.13'), MAX - 1);
    assert.equal(await remainingAfter(app, '10.22.0.1', '6.6.6.6, 198.51.100.13'), MAX - 2, 'spoofed left-most entry');
    assert.equal(await remainingAfter(app, '192.0.2.9', '6.6.6.6, 198.51.100.13, 10.22.7.7'), MAX - 3, 'a chain of trusted proxies');
    // A client talking to the API directly cannot pick its address with the header.
    assert.equal(await remainingAfter(app, '203.0.113.50', '198.51.100.13'), MAX - 1);
    assert.equal(await remainingAfter(app, '203.0.113.50', '198.51.100.14'), MAX - 2);
    assert.equal(await remainingAfter(app, '10.22.0.1', '198.51.100.13'), MAX - 4, "the forwarded client's budget was not spent by them");
  });

  it('with TRUST_PROXY=false ignores X-Forwarded-For', async () => {
    const app = await appTrusting('false');
    assert.equal(await remainingAfter(app, '10.23.0.1', '198.51.100.15'), MAX - 1);
    assert.equal(await remainingAfter(app, '10.23.0.1', '198.51.100.16'), MAX - 2);
  });

  it('keys IPv6 clients by their /64 and an IPv4-mapped address as its IPv4 address', async () => {
    const app = await appTrusting('false');
    assert.equal(await remainingAfter(app, '2001:db8:24:1::1'), MAX - 1);
    assert.equal(await remainingAfter(app, '2001:db8:24:1:ffff:ffff:ffff:fffe'), MAX - 2, 'same /64');
    assert.equal(await remainingAfter(app, '2001:0db8:0024:0001:0:0:0:9'), MAX - 3, 'same /64, written long');
    assert.equal(await remainingAfter(app, '2001:db8:24:2::1'), MAX - 1, 'the next /64');
    assert.equal(await remainingAfter(app, '198.51.100.24'), MAX - 1);
    assert.equal(await remainingAfter(app, '::ffff:198.51.100.24'), MAX - 2, 'IPv4-mapped');
    assert.equal(await remainingAfter(app, '::ffff:c633:6418'), MAX - 3, 'IPv4-mapped, hex form');
  });

  it('keys a forwarded IPv6 client by its /64 as well', async () => {
    const app = await appTrusting('1');
    assert.equal(await remainingAfter(app, '10.25.0.1', '2001:db8:25:1::1'), MAX - 1);
    assert.equal(await remainingAfter(app, '10.25.0.1', '2001:db8:25:1::2'), MAX - 2);
    assert.equal(await remainingAfter(app, '10.25.0.1', '2001:db8:25:2::1'), MAX - 1, 'another /64 behind the same proxy');
  });

  it('stops the API process at start-up when TRUST_PROXY=true, saying what to write instead', async () => {
    const api = startProcess('api/server.ts', testEnv(database.url, { TEMPORAL_ADDRESS: '127.0.0.1:1', PORT: '0', TRUST_PROXY: 'true' }));
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      new Promise((resolve) => api.child.on('exit', resolve)),
      new Promise((resolve) => (timer = setTimeout(resolve, 20_000, 'still running after 20 s'))),
    ]);
    clearTimeout(timer);
    await api.stop(); // a no-op once it has exited
    assert.equal(outcome, 1, api.output());
    assert.match(api.output(), /TRUST_PROXY: .*every X-Forwarded-For.*number of proxies/s);
  });
});

