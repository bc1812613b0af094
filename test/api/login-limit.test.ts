import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

let ip = 0;
/** Every attempt from another address, so only the per-email budget can refuse it. */
const fromNewIp = () => `10.3.${Math.floor(++ip / 250)}.${ip % 250}`;

describe('failed logins per email (docs/api.md § Rate limits)', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;

  before(async () => {
    ({ app, db } = await startTestApp(suite, { AUTH_RATE_LIMIT_MAX: '10', AUTH_RATE_LIMIT_WINDOW_MS: '900000' }));
  });

  const login = (email: string, password: string) =>
    api(app, null, { remoteAddress: fromNewIp() }).post('/api/auth/login', { email, password });

  it('refuses an email after 10 failed attempts from any addresses, before the password is checked', async () => {
    const victim = await registerUser(app);
    for (let i = 0; i < 10; i++) assert.equal((await login(victim.email, 'wrong-password')).statusCode, 401, `attempt ${i + 1}`);

    // From here on, checking this user's password fails loudly (scrypt refuses N=0: a 500), so a 429
    // proves that a refused attempt spends no scrypt.
    await db.query(`UPDATE users SET password_hash = 'scrypt$0$8$1$AAAA$AAAA' WHERE id = $1`, [victim.id]);
    for (const email of [victim.email, victim.email.toUpperCase()]) {
      const res = await login(email, 'correct horse battery');
      assert.equal(res.statusCode, 429, `${email}: ${res.body}`);
      assert.deepEqual(Object.keys(res.json()), ['message']);
      const retryAfter = Number(res.headers['retry-after']);
      assert.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${res.headers['retry-after']}`);
      assert.equal(res.headers['ratelimit-limit'], '10');
      assert.equal(res.headers['ratelimit-remaining'], '0');
      assert.ok(Number(res.headers['ratelimit-reset']) > 0 && Number(res.headers['ratelimit-reset']) <= 900);
    }
    // Other emails are not affected.
    const other = await registerUser(app);
    assert.equal((await login(other.email, 'correct horse battery')).statusCode, 200);
  });

  it('does not count successful logins', async () => {
    const user = await registerUser(app);
    for (let i = 0; i < 12; i++) assert.equal((await login(user.email, 'correct horse battery')).statusCode, 200, `login ${i + 1}`);
    for (let i = 0; i < 10; i++) assert.equal((await login(user.email, 'wrong-password')).statusCode, 401, `failure ${i + 1}`);
    assert.equal((await login(user.email, 'correct horse battery')).statusCode, 429);
  });

  it('limits an unknown email alike, so a 429 tells nothing about whether the account exists', async () => {
    const nobody = `nobody-${randomBytes(4).toString('hex')}@example.com`;
    for (let i = 0; i < 10; i++) assert.equal((await login(nobody, 'wrong-password')).statusCode, 401);
    assert.equal((await login(nobody, 'wrong-password')).statusCode, 429);
  });

  it('lets no more than 10 concurrent guesses through', async () => {
    const user = await registerUser(app);
    const codes = (await Promise.all(Array.from({ length: 30 }, () => login(user.email, 'wrong-password')))).map((r) => r.statusCode);
    assert.equal(codes.filter((c) => c === 401).length, 10, codes.join(','));
    assert.equal(codes.filter((c) => c === 429).length, 20, codes.join(','));
  });
});
