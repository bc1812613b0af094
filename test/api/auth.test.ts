import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createSigner } from 'fast-jwt';
import { ACCESS_TOKEN_AUDIENCE, ACCESS_TOKEN_ISSUER, createTokenService } from '../../api/services/tokens';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

let ip = 0;
const fromNewIp = () => `10.2.${Math.floor(++ip / 250)}.${ip % 250}`;

describe('authentication (docs/api.md § Authentication and tokens)', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Awaited<ReturnType<typeof startTestApp>>['db'];

  before(async () => {
    ({ app, db } = await startTestApp(suite));
  });

  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    api(app, null, { remoteAddress: fromNewIp() }).post(url, payload, headers);

  it('registers with the initial balance and a token pair', async () => {
    const res = await post('/api/auth/register', { email: 'Alice@Example.com', password: 'longenough', name: 'Alice' });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.equal(body.user.email, 'Alice@Example.com');
    assert.equal(body.user.balance, 1000);
    assert.equal(body.expiresIn, 900);
    assert.ok(body.accessToken && body.refreshToken);
    assert.equal('password' in body.user || 'passwordHash' in body.user, false);
    const me = await api(app, body.accessToken).get('/api/auth/me');
    assert.equal(me.statusCode, 200);
    assert.deepEqual(Object.keys(me.json()).sort(), ['balance', 'createdAt', 'email', 'id', 'name']);
    const ledger = await api(app, body.accessToken).get('/api/account/transactions');
    assert.deepEqual(ledger.json().map((t: { amount: number }) => t.amount), [1000]);
  });

  it('refuses a taken email (case-insensitively) with 409, a short password and a bad email with 400', async () => {
    await post('/api/auth/register', { email: 'bob@example.com', password: 'longenough' });
    assert.equal((await post('/api/auth/register', { email: 'BOB@example.com', password: 'longenough' })).statusCode, 409);
    const short = await post('/api/auth/register', { email: 'carol@example.com', password: 'short' });
    assert.equal(short.statusCode, 400);
    assert.match(short.json().message, /password/);
    assert.equal((await post('/api/auth/register', { email: 'not-an-email', password: 'longenough' })).statusCode, 400);
  });

  it('refuses an email whose local part is over 64 characters or that is over 254 in all, naming the field', async () => {
    const domain = (length: number) => `${'d'.repeat(60)}.${'e'.repeat(60)}.${'f'.repeat(length - 126)}.com`;
    const local64 = 'a'.repeat(64);
    for (const email of [`${'a'.repeat(65)}@example.com`, `${local64}@${domain(190)}`, `${'a'.repeat(300)}@example.com`]) {
      const res = await post('/api/auth/register', { email, password: 'longenough' });
      assert.equal(res.statusCode, 400, `${email.length}: ${res.body}`);
      assert.match(res.json().message, /^body\.email: /);
    }
    const longest = `${local64}@${domain(189)}`;
    assert.equal(longest.length, 254);
    assert.equal((await post('/api/auth/register', { email: longest, password: 'longenough' })).statusCode, 201);
  });

  it('stores passwords hashed, never in plaintext', async () => {
    await post('/api/auth/register', { email: 'dave@example.com', password: 'plaintext-canary' });
    const { rows } = await db.query(`SELECT password_hash FROM users WHERE email = 'dave@example.com'`);
    assert.match(rows[0].password_hash, /^scrypt\$/);
    assert.equal(rows[0].password_hash.includes('plaintext-canary'), false);
  });

  it('logs in; a wrong password and an unknown email get the same 401', async () => {
    await post('/api/auth/register', { email: 'erin@example.com', password: 'longenough' });
    const ok = await post('/api/auth/login', { email: 'ERIN@example.com', password: 'longenough' });
    assert.equal(ok.statusCode, 200);
    assert.ok(ok.json().accessToken);
    const wrong = await post('/api/auth/login', { email: 'erin@example.com', password: 'wrong-password' });
    const unknown = await post('/api/auth/login', { email: 'nobody@example.com', password: 'wrong-password' });
    assert.equal(wrong.statusCode, 401);
    assert.equal(unknown.statusCode, 401);
    assert.equal(wrong.json().message, unknown.json().message);
  });

  it('rotates refresh tokens and revokes the family when a rotated one is reused', async () => {
    const user = await registerUser(app);
    const first = await post('/api/auth/refresh', { refreshToken: user.refreshToken });
    assert.equal(first.statusCode, 200);
    const pair1 = first.json();
    assert.notEqual(pair1.refreshToken, user.refreshToken);
    const me = await api(app, pair1.accessToken).get('/api/auth/me');
    assert.equal(me.statusCode, 200);

    // Reusing the rotated token is theft: 401, and the newest token of the family dies too.
    assert.equal((await post('/api/auth/refresh', { refreshToken: user.refreshToken })).statusCode, 401);
    assert.equal((await post('/api/auth/refresh', { refreshToken: pair1.refreshToken })).statusCode, 401);
  });

  it('logout revokes the refresh token', async () => {
    const user = await registerUser(app);
    assert.equal((await post('/api/auth/logout', { refreshToken: user.refreshToken })).statusCode, 204);
    assert.equal((await post('/api/auth/refresh', { refreshToken: user.refreshToken })).statusCode, 401);
  });

  it('answers 401 without a credential, with a garbage one, and with a refresh token as bearer', async () => {
    const user = await registerUser(app);
    for (const authorization of [undefined, 'Bearer nonsense', 'Basic abc', `Bearer ${user.refreshToken}`, 'Bearer apk_doesnotexist']) {
      for (const [method, url] of [['GET', '/api/agents'], ['POST', '/api/agents'], ['GET', '/api/account'], ['GET', '/api/auth/me'],
        ['GET', `/api/agents/00000000-0000-4000-8000-000000000000`], ['GET', '/api/auth/api-keys']] as const) {
        const res = await api(app).request(method, url, method === 'POST' ? { name: 'x' } : undefined, authorization ? { authorization } : {});
        assert.equal(res.statusCode, 401, `${method} ${url} with ${authorization}`);
        assert.deepEqual(Object.keys(res.json()), ['message']);
      }
    }
  });

  it('rejects an access token signed with another secret or expired', async () => {
    const user = await registerUser(app);
    const forged = createTokenService({ jwtSecret: 'another-secret-another-secret-another', accessTokenTtlSeconds: 900 })
      .signAccessToken({ sub: user.id, acc: user.id });
    assert.equal((await api(app, forged).get('/api/auth/me')).statusCode, 401);
    const expired = createTokenService({ jwtSecret: 'test-secret-test-secret-test-secret-0123', accessTokenTtlSeconds: -10 })
      .signAccessToken({ sub: user.id, acc: user.id });
    assert.equal((await api(app, expired).get('/api/auth/me')).statusCode, 401);
  });

  it('signs access tokens with its issuer and audience and refuses tokens without them', async () => {
    const user = await registerUser(app);
    const me = (token: string) => api(app, token).get('/api/auth/me');
    const [, payload] = user.accessToken.split('.');
    const issued = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const sign = (claims: { iss?: string; aud?: string }) =>
      createSigner({ key: 'test-secret-test-secret-test-secret-0123', algorithm: 'HS256', expiresIn: 60_000 })({
        sub: issued.sub, acc: issued.acc, typ: 'access', ...claims,
      });
    assert.equal(issued.iss, ACCESS_TOKEN_ISSUER);
    assert.equal(issued.aud, ACCESS_TOKEN_AUDIENCE);

    assert.equal((await me(sign({ iss: ACCESS_TOKEN_ISSUER, aud: ACCESS_TOKEN_AUDIENCE }))).statusCode, 200, 'the right secret, issuer and audience');
    for (const claims of [{}, { iss: ACCESS_TOKEN_ISSUER }, { aud: ACCESS_TOKEN_AUDIENCE }, { iss: ACCESS_TOKEN_ISSUER, aud: 'another-service' },
      { iss: 'another-issuer', aud: ACCESS_TOKEN_AUDIENCE }]) {
      const res = await me(sign(claims));
      assert.equal(res.statusCode, 401, JSON.stringify(claims));
      assert.deepEqual(Object.keys(res.json()), ['message']);
    }
  });

  it('issues API keys that work as bearer credentials, are stored hashed, listed without the key, and die on delete', async () => {
    const user = await registerUser(app);
    const created = await api(app, user).post('/api/auth/api-keys', { name: 'ci' });
    assert.equal(created.statusCode, 201);
    const key = created.json();
    assert.match(key.key, /^apk_/);
    assert.equal(key.prefix, key.key.slice(0, 12));

    const viaKey = { authorization: `Bearer ${key.key}` };
    const agent = await api(app).post('/api/agents', { name: 'made with a key' }, viaKey);
    assert.equal(agent.statusCode, 201);
    const mine = await api(app, user).get(`/api/agents/${agent.json().id}`);
    assert.equal(mine.statusCode, 200, 'the key acts for its user');

    const { rows } = await db.query(`SELECT key_hash FROM api_keys WHERE id = $1`, [key.id]);
    assert.notEqual(rows[0].key_hash, key.key);

    const list = await api(app, user).get('/api/auth/api-keys');
    assert.equal(list.json().length, 1);
    assert.equal('key' in list.json()[0], false);

    const other = await registerUser(app);
    assert.equal((await api(app, other).delete(`/api/auth/api-keys/${key.id}`)).statusCode, 404);
    assert.equal((await api(app, user).delete(`/api/auth/api-keys/${key.id}`)).statusCode, 204);
    assert.equal((await api(app).get('/api/auth/me', viaKey)).statusCode, 401);
  });
});
