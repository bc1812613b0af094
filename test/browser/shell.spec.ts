import { checkScreen, expect, signUp, test } from './fixtures';

/** The skeleton: sign-up lands in the shell, whose navigation, Account switcher, balance and role are all there. */
test('the shell: navigation, Account, balance and role after signing up', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await checkScreen(page, 'sign-in');
  await signUp(page);
  for (const name of ['Agents', 'Triggers', 'Webhooks', 'Runs', 'Team', 'API keys', 'Audit log', 'Usage']) {
    await expect(page.getByRole('link', { name, exact: true })).toBeVisible();
  }
  await expect(page.getByRole('combobox', { name: 'Account' })).toBeVisible();
  await expect(page.getByText('Balance: 1,000 units')).toBeVisible();
  await expect(page.getByText('Role: owner')).toBeVisible();
  await checkScreen(page, 'agents-empty');
});

test('keyboard: "/" searches the agents, "n" opens a new agent, Escape closes it', async ({ page }) => {
  await signUp(page);
  await page.keyboard.press('/');
  await expect(page.getByRole('searchbox', { name: 'Search agents' })).toBeFocused();
  await page.getByRole('heading', { name: 'Agents', exact: true }).click();
  await page.keyboard.press('n');
  await expect(page.getByRole('dialog', { name: 'New agent' })).toBeVisible();
  await expect(page.getByRole('dialog').getByRole('textbox', { name: 'Name' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog', { name: 'New agent' })).toBeHidden();
});
