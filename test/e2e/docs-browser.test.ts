import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { ensureChromium, launchChromium } from '../helpers/chromium';
import { onCleanup, suiteContext } from '../helpers/cleanup';

const SCREENSHOTS = path.join(__dirname, '..', '..', 'test-results');

// Installs Debian's chromium if absent; the suite is skipped (with the reason printed) only where it cannot be.
const unavailable = ensureChromium();
if (unavailable) console.log(`# docs in a browser: skipped, ${unavailable}`);

/**
 * /api/docs in a real browser, loaded by both names `npm start` may print: "Try it out" must reach the
 * API from the page's own origin (a servers entry naming another origin is blocked by the browser), an
 * Authorize'd token must be sent, and the docs page's Content-Security-Policy must let it connect.
 */
describe('interactive docs in headless Chromium', { skip: unavailable ?? false }, () => {
  const suite = suiteContext();
  let app: TestApp;
  let browser: Browser;
  let port: number;
  let user: TestUser;

  before(async () => {
    // PUBLIC_BASE_URL names neither address the docs are loaded from: the docs must not depend on it.
    ({ app } = await startTestApp(suite, { PUBLIC_BASE_URL: 'https://api.example.com' }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
    user = await registerUser(app);
    browser = await launchChromium();
    onCleanup(suite, () => browser.close());
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  /**
   * Opens an operation, presses "Try it out" (picking one of the body's named examples, if given) then
   * "Execute", and answers the live response's status and body.
   */
  async function tryItOut(page: Page, method: string, apiPath: string, example?: string): Promise<{ operation: Locator; status: string; body: string }> {
    const operation = page.locator(`.opblock-${method}`, { has: page.locator(`.opblock-summary-path[data-path="${apiPath}"]`) });
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    if (example) await operation.locator('.opblock-section-request-body .examples-select-element').selectOption(example);
    await operation.getByRole('button', { name: 'Execute' }).click();
    const response = operation.locator('.live-responses-table tbody tr.response').first();
    await response.waitFor();
    return {
      operation,
      status: (await response.locator('.response-col_status').innerText()).trim(),
      body: await response.locator('.response-col_description').innerText(),
    };
  }

  for (const host of ['127.0.0.1', 'localhost']) {
    it(`"Try it out" works from http://${host}:<port>/api/docs, anonymously and with an Authorize'd token, examples included`, async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      page.setDefaultTimeout(20_000);
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (/connect-src|Failed to fetch|CORS/i.test(message.text())) blocked.push(message.text());
      });
      try {
        await page.goto(`http://${host}:${port}/api/docs`);

        const health = await tryItOut(page, 'get', '/api/health');
        assert.equal(health.status, '200', health.body);
        assert.match(health.body, /"ok": true/);
        assert.match(await health.operation.locator('.request-url').innerText(), new RegExp(`http://${host}:${port}/api/health`));

        await page.locator('.auth-wrapper .authorize').click();
        await page.locator('#auth-bearer-value').fill(user.accessToken);
        await page.locator('.auth-btn-wrapper .authorize').click();
        await page.locator('.auth-btn-wrapper .btn-done').click();
        const me = await tryItOut(page, 'get', '/api/auth/me');
        assert.equal(me.status, '200', me.body);
        assert.match(me.body, new RegExp(`"email": "${user.email}"`));

        // A typed config from the document's examples: the "cron" one creates a cron trigger as it is.
        const cron = await tryItOut(page, 'post', '/api/user-triggers', 'cron');
        assert.equal(cron.status, '201', cron.body);
        assert.match(cron.body, /"type": "cron"[\s\S]*"cronExpression": "0 9 \* \* 1-5"/);

        // The operation as the user sees it: the request with its Authorization header, the 200 and its body.
        await me.operation.screenshot({ path: path.join(SCREENSHOTS, `docs-try-it-out-${host}.png`) });
        assert.deepEqual(blocked, []);
      } finally {
        await page.close();
      }
    });
  }
});
