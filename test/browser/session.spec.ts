import type { Page } from '@playwright/test';
import { expect, newEmail, PASSWORD, signUp, test } from './fixtures';

/** What a signed-in shell shows: the navigation and the Account switcher. */
async function expectSignedIn(page: Page) {
  await expect(page.getByRole('combobox', { name: 'Account' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Agents', exact: true })).toBeVisible();
}

/** Nothing is kept in Web Storage, and the refresh cookie is out of script's reach. */
async function expectNothingStored(page: Page) {
  // Runs in the page (typed here without the DOM's library, which the node tests' types would clash with).
  const stored = await page.evaluate(() => {
    const web = globalThis as unknown as { localStorage: { length: number }; sessionStorage: { length: number }; document: { cookie: string } };
    return { local: web.localStorage.length, session: web.sessionStorage.length, cookie: web.document.cookie };
  });
  expect(stored).toEqual({ local: 0, session: 0, cookie: '' });
}

/**
 * Browser test 4: a reload on every page keeps the session (the ap_refresh cookie is exchanged for a new
 * access token), nothing sensitive is in localStorage or sessionStorage, and after sign-out nothing of the
 * session is left in the DOM, the storage or the cookie jar.
 */
test('reload on every page keeps the session; sign-out leaves nothing behind', async ({ page, context }) => {
  const email = await signUp(page, newEmail('reload'));
  await page.getByRole('button', { name: 'New agent' }).click();
  await page.getByRole('dialog', { name: 'New agent' }).getByRole('textbox', { name: 'Name' }).fill('Reload agent');
  await page.getByRole('dialog', { name: 'New agent' }).getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('tab', { name: 'Overview' })).toBeVisible();
  const agentUrl = page.url().replace(/\/overview$/, '');
  await page.getByRole('tab', { name: 'Runs' }).click();
  await page.getByRole('textbox', { name: 'Input' }).fill('hello');
  await page.getByRole('button', { name: 'Run' }).click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  const runUrl = page.url();

  const cookie = (await context.cookies()).find((c) => c.name === 'ap_refresh');
  expect(cookie, 'the refresh cookie').toBeTruthy();
  expect({ httpOnly: cookie!.httpOnly, sameSite: cookie!.sameSite, path: cookie!.path }).toEqual({ httpOnly: true, sameSite: 'Strict', path: '/api/auth' });

  const base = new URL(agentUrl).pathname.split('/agents/')[0]!;
  const pages = [
    `${base}/agents`,
    `${base}/agents?q=reload`,
    `${agentUrl}/overview`,
    `${agentUrl}/tools`,
    `${agentUrl}/connectors`,
    `${agentUrl}/triggers`,
    `${agentUrl}/runs`,
    runUrl,
    `${base}/runs`,
    `${base}/triggers`,
    `${base}/webhooks`,
    `${base}/team`,
    `${base}/api-keys`,
    `${base}/audit`,
    `${base}/usage`,
  ];
  for (const url of pages) {
    await page.goto(url);
    await expectSignedIn(page);
    await page.reload();
    await expectSignedIn(page);
    expect(new URL(page.url()).pathname + new URL(page.url()).search, 'the reload stays where it was').toBe(new URL(url, page.url()).pathname + new URL(url, page.url()).search);
    await expectNothingStored(page);
  }
  await page.goto(`${agentUrl}/overview`);
  await expect(page.getByRole('textbox', { name: 'Name' })).toHaveValue('Reload agent');

  // Sign out: back to sign-in, and nothing of the session anywhere.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  const html = await page.content();
  for (const secret of [email, 'Reload agent', 'rt_', 'eyJ', 'Balance']) expect(html, `the DOM after sign-out holds "${secret}"`).not.toContain(secret);
  await expectNothingStored(page);
  expect((await context.cookies()).filter((c) => c.name === 'ap_refresh' && c.value !== ''), 'the refresh cookie is cleared').toEqual([]);

  // A reload or a link into the workspace finds no session: the sign-in page, and after signing in, back there.
  await page.goto(`${agentUrl}/overview`);
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await page.getByRole('textbox', { name: 'Email' }).fill(email);
  await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('textbox', { name: 'Name' })).toHaveValue('Reload agent');
  await expect(page).toHaveURL(`${agentUrl}/overview`);
});

test('a wrong password is shown as the API says it, in an alert', async ({ page }) => {
  const email = await signUp(page, newEmail('wrong'));
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('textbox', { name: 'Email' }).fill(email);
  await page.getByRole('textbox', { name: 'Password' }).fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('Invalid email or password');
});
