import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { NONCE_PLACEHOLDER } from '../../api/plugins/console';
import { buildApp } from '../../api/app';
import { createTemporalClient } from '../../engine/temporal/client';
import { api } from '../helpers/api';
import type { TestApp } from '../helpers/app';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { testConfig } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

/** A console build as web/vite.config.mts makes one: index.html with nonce placeholders, hashed assets, a root file. */
function fakeBuild(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-build-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    `<!doctype html><html><head><meta property="csp-nonce" nonce="${NONCE_PLACEHOLDER}"><script type="module" src="/assets/index-AbC123.js" nonce="${NONCE_PLACEHOLDER}"></script></head><body><div id="root"></div></body></html>`,
  );
  fs.writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log("console")');
  fs.writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return dir;
}

/** The console served by the API process at / (docs/console.md § Serving): cache headers, SPA fallback, CSP; /api unchanged. */
describe('the console served at /', () => {
  const suite = suiteContext();
  let app: TestApp;
  let unbuilt: TestApp;

  before(async () => {
    const database = await createTestDatabase(suite);
    const config = testConfig(database.url);
    const temporal = createTemporalClient(config);
    onCleanup(suite, () => temporal.close());
    const dir = fakeBuild();
    onCleanup(suite, () => fs.rmSync(dir, { recursive: true, force: true }));
    app = await buildApp({ config, db: database.db, temporal, logger: false, consoleDir: dir });
    onCleanup(suite, () => app.close());
    unbuilt = await buildApp({ config, db: database.db, temporal, logger: false, consoleDir: path.join(dir, 'missing') });
    onCleanup(suite, () => unbuilt.close());
    await Promise.all([app.ready(), unbuilt.ready()]);
  });

  it('answers any page a browser asks for outside /api with index.html: no-cache, a fresh nonce, a same-origin CSP', async () => {
    const nonces = new Set<string>();
    for (const url of ['/', '/signin', '/w/5f0c7a57-3c39-4c0a-9c43-5b1c3a5f2d11/agents/abc/runs?x=1', '/some/deep/link']) {
      const res = await api(app).get(url, HTML);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.headers['cache-control'], 'no-cache');
      const csp = String(res.headers['content-security-policy']);
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
      assert.ok(nonce, csp);
      assert.ok(!res.body.includes(NONCE_PLACEHOLDER), 'the placeholder is replaced');
      assert.equal(res.body.split(`nonce="${nonce}"`).length - 1, 2, 'the meta and the script carry the response\'s nonce');
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'(;|$)/, 'no inline or foreign script');
      assert.match(csp, /connect-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
      nonces.add(nonce);
    }
    assert.equal(nonces.size, 4, 'a nonce per response');
  });

  it('serves hashed assets immutable for a year and other files revalidated', async () => {
    const asset = await api(app).get('/assets/index-AbC123.js');
    assert.equal(asset.statusCode, 200);
    assert.equal(asset.body, 'console.log("console")');
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(asset.headers['content-type']), /javascript/);
    const icon = await api(app).get('/favicon.svg');
    assert.equal(icon.statusCode, 200);
    assert.equal(icon.headers['cache-control'], 'no-cache');
  });

  it('leaves /api as it was: unknown routes 404 { message } even for a browser, wrong methods 405', async () => {
    for (const [method, url, headers] of [
      ['GET', '/api/nothing-here', HTML],
      ['GET', '/api', HTML],
      ['POST', '/api/nothing-here', {}],
      ['DELETE', '/api/agents/nothing/else', {}],
    ] as const) {
      const res = await api(app).request(method, url, undefined, headers);
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
      assert.deepEqual(Object.keys(res.json()), ['message']);
    }
    const wrongMethod = await api(app).request('DELETE', '/api/agents');
    assert.equal(wrongMethod.statusCode, 405);
    // A page path with another method is no page.
    const post = await api(app).post('/w/x/agents', { a: 1 });
    assert.equal(post.statusCode, 404);
    assert.deepEqual(Object.keys(post.json()), ['message']);
    // A file that is not there, asked for by a script (no text/html): 404 { message }, not the page.
    const missing = await api(app).get('/assets/missing-123.js', { accept: '*/*' });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(Object.keys(missing.json()), ['message']);
  });

  it('keeps the API\'s own policy on /api and the docs page\'s on /api/docs', async () => {
    const health = await api(app).get('/api/health', HTML);
    assert.equal(health.statusCode, 200);
    assert.match(String(health.headers['content-security-policy']), /default-src 'none'/);
    const docs = await api(app).get('/api/docs/', HTML);
    assert.equal(docs.statusCode, 200);
    assert.match(docs.body, /swagger/i);
  });

  it('without a build, a page request says how to make one (404 { message }) and the API works', async () => {
    const res = await api(unbuilt).get('/', HTML);
    assert.equal(res.statusCode, 404);
    assert.match(res.json().message, /npm run build:web/);
    assert.equal((await api(unbuilt).get('/api/health')).statusCode, 200);
  });
});
