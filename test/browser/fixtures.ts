import { mkdirSync } from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, test as base, type APIRequestContext, type Page } from '@playwright/test';

export { expect };

/** Screenshots of every screen a test visits, for a person to look at (gitignored). */
export const SCREENSHOTS = path.join(__dirname, '..', '..', 'test-results', 'console');
mkdirSync(SCREENSHOTS, { recursive: true });

let counter = 0;
/** A fresh address per sign-up, so tests never share an account. */
export function newEmail(label = 'user'): string {
  return `${label}-${Date.now().toString(36)}-${++counter}@example.com`;
}
export const PASSWORD = 'correct horse battery staple';

/**
 * Runs axe on the page as it is and fails on any serious or critical violation (naming each, with the
 * elements it found), then keeps a full-page screenshot named after the screen.
 */
export async function checkScreen(page: Page, screen: string): Promise<void> {
  // From the top, so the fixed header and navigation sit where a person sees them in the full-page picture.
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: path.join(SCREENSHOTS, `${screen}.png`), fullPage: true });
  const results = await new AxeBuilder({ page }).analyze();
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const report = bad.map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.slice(0, 5).map((n) => `    ${n.target.join(' ')} — ${n.failureSummary?.split('\n').join(' ')}`).join('\n')}`);
  expect(report, `axe on ${screen}`).toEqual([]);
}

/** Signs up through the console's own sign-in page and lands on the agents list. */
export async function signUp(page: Page, email = newEmail()): Promise<string> {
  await page.goto('/signin');
  await page.getByRole('textbox', { name: 'Email' }).fill(email);
  await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page.getByRole('button', { name: 'New agent' })).toBeVisible();
  return email;
}

/** Registers through the API (a script's way), answering the access token. */
export async function register(request: APIRequestContext, email: string): Promise<string> {
  const res = await request.post('/api/auth/register', { data: { email, password: PASSWORD } });
  expect(res.status()).toBe(201);
  return (await res.json()).accessToken;
}

/** Signs in an existing user through the console's sign-in page. */
export async function signIn(page: Page, email: string): Promise<void> {
  await page.goto('/signin');
  await page.getByRole('textbox', { name: 'Email' }).fill(email);
  await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

/** Every test: the console's URL as its base, and any page error (an uncaught exception) fails it. */
export const test = base.extend<{ consoleErrors: string[] }>({
  // Playwright reads a fixture's dependencies from its first parameter's pattern: this one has none.
  // eslint-disable-next-line no-empty-pattern
  baseURL: async ({}, use) => use(process.env.CONSOLE_URL),
  consoleErrors: [
    async ({ page }, use) => {
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      page.on('console', (message) => {
        if (message.type() === 'error' && /Content Security Policy|Refused to/.test(message.text())) errors.push(message.text());
      });
      await use(errors);
      expect(errors, 'uncaught errors and CSP refusals in the page').toEqual([]);
    },
    { auto: true },
  ],
});
