import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

describe('API conventions (docs/api.md § Conventions)', () => {
  const suite = suiteContext();
  let app: TestApp;
  let user: TestUser;

  before(async () => {
    ({ app } = await startTestApp(suite));
    user = await registerUser(app);
  });

  function assertOnlyMessage(body: string): string {
    const parsed = JSON.parse(body);
    assert.deepEqual(Object.keys(parsed), ['message']);
    assert.equal(typeof parsed.message, 'string');
    assert.ok(parsed.message.length > 0);
    return parsed.message;
  }

  it('answers 404 { message } for an unknown route', async () => {
    const res = await api(app, user).get('/api/no-such-thing');
    assert.equal(res.statusCode, 404);
    assert.match(assertOnlyMessage(res.body), /not found/);
  });

  it('answers 405 { message } with Allow for an unknown method on a known path, with or without a credential', async () => {
    const cases = [
      ['DELETE', '/api/agents', 'GET, HEAD, POST'],
      ['POST', `/api/agents/${crypto.randomUUID()}`, 'DELETE, GET, HEAD, PATCH, PUT'],
      ['PUT', '/api/health?x=1', 'GET, HEAD'],
      ['GET', '/api/auth/login/', 'POST'],
      ['OPTIONS', '/api/hooks/triggers/some-path', 'POST'],
    ] as const;
    for (const [method, url, allow] of cases) {
      for (const headers of [{}, user.auth]) {
        const res = await api(app).request(method, url, undefined, headers);
        assert.equal(res.statusCode, 405, `${method} ${url}: ${res.body}`);
        assert.equal(res.headers.allow, allow, `${method} ${url}`);
        assert.match(assertOnlyMessage(res.body), new RegExp(`^Method ${method} is not allowed on /api/`));
        assert.equal(res.headers['api-version'], '1');
      }
    }
    // Unknown paths stay 404, whatever the method.
    for (const method of ['GET', 'DELETE'] as const) assert.equal((await api(app).request(method, '/api/agents/x/y/z')).statusCode, 404);
  });

  it('answers 405 with the Allow of a path a route of its own owns, not a parametric sibling\'s 404 (POST /api/agents/import beside /api/agents/:id)', async () => {
    // Found by schemathesis: PUT /api/agents/import reached /api/agents/:id with id "import" (404), and OPTIONS there
    // advertised /api/agents/:id's methods.
    for (const url of ['/api/agents/import', '/api/agents/import/', '/api/agents/import?x=1']) {
      for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
        for (const headers of [{}, user.auth]) {
          const res = await api(app).request(method, url, method === 'PUT' || method === 'PATCH' ? { name: 'x' } : undefined, headers);
          assert.equal(res.statusCode, 405, `${method} ${url}: ${res.body}`);
          assert.equal(res.headers.allow, 'POST', `${method} ${url}`);
          if (method !== 'HEAD') assert.equal(assertOnlyMessage(res.body), `Method ${method} is not allowed on ${url.split('?')[0]}; it allows POST`);
        }
      }
    }
    // The parametric route keeps its own: an id's methods, a malformed id's 404.
    const id = crypto.randomUUID();
    assert.equal((await api(app).request('OPTIONS', `/api/agents/${id}`)).headers.allow, 'DELETE, GET, HEAD, PATCH, PUT');
    assert.equal((await api(app, user).get('/api/agents/importx')).statusCode, 404);
    assert.equal((await api(app, user).get(`/api/agents/${id}`)).statusCode, 404);
    // And the owner's method still reaches it.
    assert.equal((await api(app, user).post('/api/agents/import', {})).statusCode, 400);
  });

  it('answers 405 (or 404) to a request that matches no route whatever its body, a QUERY without Content-Type included', async () => {
    // Fastify reads the body of a request no route matches, and refuses a QUERY without Content-Type with a 400
    // of its own; the answer is that the method is not allowed there (found by schemathesis' unsupported_method).
    const cases = [
      { method: 'QUERY', url: '/api/health', headers: {}, payload: undefined },
      { method: 'QUERY', url: '/api/agents', headers: { ...user.auth, 'content-type': 'application/json' }, payload: '' },
      { method: 'PUT', url: '/api/health', headers: { 'content-type': 'application/json' }, payload: '{"x": ' },
      { method: 'PATCH', url: '/api/account', headers: { ...user.auth, 'content-type': 'text/plain' }, payload: 'x' },
    ] as const;
    for (const { method, url, headers, payload } of cases) {
      const res = await app.inject({ method: method as 'GET', url, headers, payload });
      assert.equal(res.statusCode, 405, `${method} ${url}: ${res.body}`);
      assert.match(res.headers.allow as string, /^GET, HEAD/, `${method} ${url}`);
      assert.match(assertOnlyMessage(res.body), new RegExp(`^Method ${method} is not allowed on ${url}`));
    }
    const unknown = await app.inject({ method: 'QUERY' as 'GET', url: '/api/no-such-thing' });
    assert.equal(unknown.statusCode, 404, unknown.body);
    assertOnlyMessage(unknown.body);
  });

  it('answers { message } for what the router refuses before any route: a too-long path segment (404), bad percent-encoding (400)', async () => {
    const long = await api(app, user).get(`/api/agents/${'x'.repeat(150)}`);
    assert.equal(long.statusCode, 404);
    assertOnlyMessage(long.body);
    const bad = await api(app, user).get('/api/agents/%zz');
    assert.equal(bad.statusCode, 400);
    assertOnlyMessage(bad.body);
  });

  it('answers 400 { message } for malformed JSON', async () => {
    const res = await api(app, user).post('/api/agents', '{"name": ');
    assert.equal(res.statusCode, 400);
    assert.match(assertOnlyMessage(res.body), /JSON/);
  });

  it('answers 415 { message } for a non-JSON content type', async () => {
    const res = await api(app, user).post('/api/agents', 'name=x', { 'content-type': 'text/plain' });
    assert.equal(res.statusCode, 415);
    assertOnlyMessage(res.body);
  });

  it('answers 413 { message } for a body over 1 MiB', async () => {
    const res = await api(app, user).post('/api/agents', { name: 'big', description: 'x'.repeat(1024 * 1024) });
    assert.equal(res.statusCode, 413);
    assertOnlyMessage(res.body);
  });

  it('names the field in a validation error', async () => {
    const res = await api(app, user).post('/api/agents', { name: 'x', memoryConfig: { maxMessages: 0 } });
    assert.equal(res.statusCode, 400);
    assert.match(assertOnlyMessage(res.body), /memoryConfig\.maxMessages/);
  });

  it('answers 404, never 500, for a malformed id in a path', async () => {
    for (const url of ['/api/agents/not-a-uuid', '/api/agents/123', "/api/agents/'%20OR%201=1"]) {
      const res = await api(app, user).get(url);
      assert.equal(res.statusCode, 404, url);
      assertOnlyMessage(res.body);
    }
  });

  it('answers 400 for a bad limit or cursor', async () => {
    for (const qs of ['limit=0', 'limit=201', 'limit=abc', 'cursor=garbage']) {
      const res = await api(app, user).get(`/api/agents?${qs}`);
      assert.equal(res.statusCode, 400, qs);
      assertOnlyMessage(res.body);
    }
  });

  it('sends API-Version: 1 on success, errors and unknown routes', async () => {
    for (const [url, headers] of [['/api/health', {}], ['/api/agents', {}], ['/api/nope', user.auth], ['/api/agents', user.auth]] as const) {
      const res = await api(app).get(url, headers);
      assert.equal(res.headers['api-version'], '1', url);
    }
  });

  it('serves an OpenAPI 3.1 document with every route and its schemas', async () => {
    const res = await api(app).get('/api/openapi.json');
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.match(doc.openapi, /^3\.1/);
    for (const path of ['/api/agents', '/api/agents/{id}', '/api/agents/{id}/graph', '/api/auth/register', '/api/auth/login',
      '/api/auth/refresh', '/api/auth/logout', '/api/auth/me', '/api/auth/api-keys', '/api/account', '/api/account/transactions',
      '/api/health', '/api/health/db', '/api/health/temporal']) {
      assert.ok(doc.paths[path], `missing ${path}`);
    }
    const create = doc.paths['/api/agents'].post;
    assert.ok(create.requestBody.content['application/json'].schema);
    for (const status of ['201', '400', '401', '402']) assert.ok(create.responses[status], `POST /api/agents lacks ${status}`);
    assert.ok(doc.paths['/api/agents/{id}'].patch, 'PATCH documented');
    assert.ok(doc.components.schemas.Agent);
  });

  it('serves interactive docs', async () => {
    const res = await api(app).get('/api/docs');
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /text\/html/);
  });
});
