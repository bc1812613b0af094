import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

/** `script-src 'self'; …` → Map of directive → sources. */
function parseCsp(header: string | undefined): Map<string, string[]> {
  assert.ok(header, 'Content-Security-Policy is set');
  return new Map(
    header
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name!.toLowerCase(), sources]),
  );
}

/** Whether the policy lets a page at `page` load `url` for `directive` (with default-src as fallback). */
function allows(csp: Map<string, string[]>, directive: string, url: URL, page: URL): boolean {
  const sources = csp.get(directive) ?? csp.get('default-src') ?? ['*'];
  return sources.some((s) =>
    (s === "'self'" && url.origin === page.origin)
    || s === url.protocol
    || s === '*'
    || (/^[a-z][a-z0-9+.-]*:\/\//i.test(s) && url.href.startsWith(s)));
}

describe('security headers (helmet) and the docs page CSP', () => {
  const suite = suiteContext();
  let app: TestApp;

  before(async () => {
    ({ app } = await startTestApp(suite));
  });

  it('puts the usual security headers on every API response, errors included', async () => {
    const user = await registerUser(app);
    const responses = {
      health: await api(app).get('/api/health'),
      authenticated: await api(app, user).get('/api/agents'),
      unauthorized: await api(app).get('/api/agents'),
      'unknown route': await api(app).get('/api/nothing-here'),
      'bad JSON': await api(app, user).post('/api/agents', '{'),
      openapi: await api(app).get('/api/openapi.json'),
    };
    for (const [name, res] of Object.entries(responses)) {
      const h = res.headers;
      assert.equal(h['x-content-type-options'], 'nosniff', name);
      assert.match(String(h['strict-transport-security']), /max-age=\d+/, name);
      assert.equal(h['x-frame-options'], 'DENY', name);
      assert.equal(h['referrer-policy'], 'no-referrer', name);
      assert.equal(h['cross-origin-opener-policy'], 'same-origin', name);
      assert.equal(h['cross-origin-resource-policy'], 'same-origin', name);
      assert.equal(h['x-powered-by'], undefined, name);
      // JSON needs no sources at all: nothing may be loaded, framed or submitted on the strength of a response.
      const csp = parseCsp(h['content-security-policy'] as string);
      assert.deepEqual(csp.get('default-src'), ["'none'"], name);
      assert.deepEqual(csp.get('frame-ancestors'), ["'none'"], name);
      assert.equal(h['api-version'], '1', name);
    }
  });

  it("serves the docs page with a policy that allows its own scripts, styles, images and spec, and nothing else", async () => {
    for (const pageUrl of ['/api/docs', '/api/docs/']) {
      const res = await api(app).get(pageUrl);
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /text\/html/);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      const page = new URL(pageUrl, 'http://localhost:3000');
      const csp = parseCsp(res.headers['content-security-policy'] as string);
      assert.equal(csp.has('upgrade-insecure-requests'), false, 'the docs work over plain http on localhost');

      const html = res.body;
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
      const styles = [...html.matchAll(/<link\b[^>]*rel="stylesheet"[^>]*>/gi)].map((m) => /href="([^"]+)"/.exec(m[0])![1]!);
      assert.ok(scripts.length >= 3 && styles.length >= 1, 'the page loads scripts and styles');
      assert.equal(/<style\b/i.test(html), false, 'no inline style element');
      for (const [, attributes, body] of scripts) {
        const src = /src="([^"]+)"/.exec(attributes!)?.[1];
        assert.ok(src && body!.trim() === '', 'no inline script');
        const url = new URL(src, page);
        assert.ok(allows(csp, 'script-src', url, page), `script ${url.href} blocked by ${res.headers['content-security-policy']}`);
        const asset = await api(app).get(url.pathname);
        assert.equal(asset.statusCode, 200, url.pathname);
        assert.match(String(asset.headers['content-type']), /javascript/);
      }
      for (const href of styles) {
        const url = new URL(href, page);
        assert.ok(allows(csp, 'style-src', url, page), `style ${url.href} blocked by ${res.headers['content-security-policy']}`);
        assert.equal((await api(app).get(url.pathname)).statusCode, 200, url.pathname);
      }
      // The UI fetches the spec from this server, shows its logo as a data: image, and sends
      // "Try it out" requests to PUBLIC_BASE_URL.
      assert.ok(allows(csp, 'connect-src', new URL('/api/docs/json', page), page), 'spec fetch');
      assert.ok(allows(csp, 'connect-src', new URL('http://localhost:3000/api/agents'), page), 'try it out');
      assert.ok(allows(csp, 'img-src', new URL('data:image/svg+xml;base64,AAAA'), page), 'logo');
      assert.equal(allows(csp, 'script-src', new URL('https://cdn.example.com/x.js'), page), false, 'no foreign scripts');
      assert.equal(allows(csp, 'connect-src', new URL('https://attacker.example/collect'), page), false, 'no foreign fetches');
    }
  });
});
