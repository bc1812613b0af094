import { checkScreen, expect, newEmail, register, signIn, signUp, test } from './fixtures';

/** What a first user hit: Run is in an agent's header (on every tab), not only on its Runs tab. */
test("Run with its input from the agent's header, on its Overview tab", async ({ page }) => {
  await signUp(page);
  await page.getByRole('button', { name: 'New agent' }).click();
  const dialog = page.getByRole('dialog', { name: 'New agent' });
  await dialog.getByRole('textbox', { name: 'Name' }).fill('Header agent');
  await dialog.getByRole('combobox', { name: 'Status' }).selectOption('active');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('tab', { name: 'Overview' })).toHaveAttribute('aria-selected', 'true');
  const form = page.getByRole('form', { name: 'Start a run' });
  await form.getByRole('textbox', { name: 'Input' }).fill('Say hello');
  await checkScreen(page, 'agent-header-run');
  await form.getByRole('button', { name: 'Run', exact: true }).click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  await expect(page.getByLabel('Status')).toHaveText('succeeded', { timeout: 30_000 });
  await expect(page.getByLabel('Input', { exact: true })).toHaveText('Say hello');
});

/** A phone-width screen: the header's balance, role and Sign out are in a pop-over, readable; nothing runs off the side. */
test('phone width (390×844): balance, role and Sign out in a pop-over of the header', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signUp(page);
  const menu = page.getByRole('button', { name: 'Your account' });
  await expect(menu).toBeVisible();
  await expect(page.getByRole('button', { name: 'Sign out' })).toHaveCount(0);
  await expect(page.getByRole('combobox', { name: 'Account' })).toBeVisible();
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  await menu.click();
  const dropdown = page.getByRole('dialog', { name: 'Your account' });
  await expect(dropdown.getByText('Balance: 1,000 units')).toBeVisible();
  await expect(dropdown.getByText('Role: owner')).toBeVisible();
  await expect(dropdown.getByRole('button', { name: 'Sign out' })).toBeVisible();
  await checkScreen(page, 'phone-header-menu');
  await dropdown.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
});

/**
 * A list refreshes when the window is focused again after a change made elsewhere (here the API, as a
 * script or another window would): no reload. Focus alone, not a tab shown again (TanStack Query's default).
 */
test('the agents list refreshes on window focus after an agent was made through the API', async ({ page, request }) => {
  const email = newEmail('focus');
  const headers = { Authorization: `Bearer ${await register(request, email)}` };
  await signIn(page, email);
  await expect(page.getByText('No agents yet').or(page.getByRole('heading', { name: 'Agents', exact: true })).first()).toBeVisible();
  const made = await request.post('/api/agents', { headers, data: { name: 'Made elsewhere', status: 'active' } });
  expect(made.status()).toBe(201);
  // Past the console's staleTime (5 s): what was read before is old enough to read again.
  await page.waitForTimeout(5_500);
  await expect(page.getByText('Made elsewhere')).toHaveCount(0);
  await page.evaluate("window.dispatchEvent(new Event('focus'))");
  await expect(page.getByRole('link', { name: 'Made elsewhere' })).toBeVisible({ timeout: 5_000 });
});
