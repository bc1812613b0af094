import { checkScreen, expect, SCREENSHOTS, signUp, test } from './fixtures';

/**
 * The console's first journey (browser test 1): create an account, create an agent, give it a custom tool
 * pointing at a real endpoint, run it, watch the steps arrive live, and see the run succeed.
 */
test('create account → create agent → add a custom tool → run it → steps appear live → the run succeeds', async ({ page }) => {
  await signUp(page);

  // Create an agent: the dialog says what it costs and what the balance is.
  await page.getByRole('button', { name: 'New agent' }).click();
  const dialog = page.getByRole('dialog', { name: 'New agent' });
  await dialog.getByRole('textbox', { name: 'Name' }).fill('Price agent');
  await dialog.getByRole('combobox', { name: 'Status' }).selectOption('active');
  await expect(dialog.getByText('Creating it costs 100 units; the balance is 1,000 units.')).toBeVisible();
  await checkScreen(page, 'agent-create-dialog');
  await dialog.getByRole('button', { name: 'Create' }).click();

  // The agent's page, its tabs, and the balance spent.
  for (const name of ['Overview', 'Tools', 'Connectors', 'Triggers', 'Runs']) await expect(page.getByRole('tab', { name })).toBeVisible();
  await expect(page.getByText('Balance: 900 units')).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Name' })).toHaveValue('Price agent');
  await checkScreen(page, 'agent-overview');

  // A custom tool, from the form the API's own schema generates.
  await page.getByRole('tab', { name: 'Tools' }).click();
  await expect(page.getByText('No tools yet')).toBeVisible();
  await checkScreen(page, 'agent-tools-empty');
  await page.getByRole('button', { name: 'Add tool' }).click();
  const form = page.getByRole('dialog', { name: 'Add a tool' });
  await form.getByRole('combobox', { name: 'Type' }).selectOption('custom');
  await form.getByRole('textbox', { name: 'Name' }).fill('price lookup');
  await form.getByRole('textbox', { name: 'Description' }).fill('Looks up the price');
  await form.getByRole('textbox', { name: 'Endpoint' }).fill(`${process.env.CONSOLE_RECEIVER_URL}/price`);
  await checkScreen(page, 'agent-tool-form');
  await form.getByRole('button', { name: 'Add tool' }).click();
  await expect(form).toBeHidden();
  const tools = page.getByRole('table', { name: 'Tools' });
  await expect(tools.getByRole('cell', { name: 'price lookup', exact: true })).toBeVisible();
  await expect(tools.getByText(`GET ${process.env.CONSOLE_RECEIVER_URL}/price`)).toBeVisible();
  await checkScreen(page, 'agent-tools');

  // Run it: the run page shows each step as it finishes, before the run is over.
  await page.getByRole('tab', { name: 'Runs' }).click();
  await page.getByRole('textbox', { name: 'Input' }).fill('What does it cost?');
  await page.getByRole('button', { name: 'Run' }).click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  const steps = page.getByRole('list', { name: 'Steps' });
  // The model's first answer (a tool call) and the tool's result arrive together; its last answer a second later.
  await expect(steps.getByRole('listitem').first()).toBeVisible({ timeout: 30_000 });
  expect(await steps.getByRole('listitem').count(), 'steps shown while the run is still running').toBeLessThan(3);
  await expect(page.getByText('succeeded')).toHaveCount(0);
  await page.screenshot({ path: `${SCREENSHOTS}/run-live.png`, fullPage: true });
  await expect(steps.getByRole('listitem')).toHaveCount(3, { timeout: 30_000 });
  await expect(page.getByText('succeeded').first()).toBeVisible();
  await expect(steps.getByRole('listitem').nth(0)).toContainText('model');
  await expect(steps.getByRole('listitem').nth(1)).toContainText('tool call');
  await expect(steps.getByRole('listitem').nth(1)).toContainText('42');
  await expect(page.getByText('The tool said:').first()).toBeVisible();
  await checkScreen(page, 'run-succeeded');

  // The runs list across agents has it, with its agent.
  await page.getByRole('link', { name: 'Runs', exact: true }).click();
  const runs = page.getByRole('table', { name: 'Runs' });
  await expect(runs.getByRole('link', { name: 'Price agent' })).toBeVisible();
  await expect(runs.getByText('succeeded')).toBeVisible();
  await checkScreen(page, 'runs-list');
});
