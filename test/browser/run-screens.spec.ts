import { checkScreen, expect, signUp, test } from './fixtures';

/**
 * A run page whose live stream is refused (the API answers 429 when a user has too many streams open):
 * the refusal is shown with its message, and the steps still arrive, read every few seconds instead.
 * The refusal is the browser's route answering for the API; everything else is the real stack.
 */
test('a refused live stream: its message in an alert, the steps read instead, the run seen to succeed', async ({ page }) => {
  await page.route('**/api/runs/*/events', (route) =>
    route.fulfill({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '30' }, body: JSON.stringify({ message: 'At most 10 live run streams per user are open at once' }) }),
  );
  await signUp(page);
  await page.getByRole('button', { name: 'New agent' }).click();
  const dialog = page.getByRole('dialog', { name: 'New agent' });
  await dialog.getByRole('textbox', { name: 'Name' }).fill('Plain agent');
  await dialog.getByRole('combobox', { name: 'Status' }).selectOption('active');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('tab', { name: 'Runs' }).click();
  await page.getByRole('textbox', { name: 'Input' }).fill('Say hello');
  await page.getByRole('button', { name: 'Run' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'At most 10 live run streams per user are open at once' })).toBeVisible();
  await expect(page.getByRole('alert').filter({ hasText: 'Try again in 30 s' })).toBeVisible();
  await expect(page.getByRole('list', { name: 'Steps' }).getByRole('listitem')).toHaveCount(1, { timeout: 30_000 });
  await expect(page.getByText('succeeded').first()).toBeVisible({ timeout: 30_000 });
  await expect(page.getByText('Hello from the scripted model.').first()).toBeVisible();
  await checkScreen(page, 'run-stream-refused');
});
