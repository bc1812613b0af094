import { checkScreen, expect, signUp, test } from './fixtures';

/**
 * The rest of the second half's screens, each with axe and a screenshot: an agent's Triggers tab with an
 * event trigger and its filter, Fire now starting a run, the API's 400 shown on a bad cron expression, an
 * incoming webhook's URL, API keys (shown once, revoked), the audit log and usage.
 */
test('agent triggers, an incoming webhook, API keys, audit log and usage', async ({ page, context }) => {
  test.setTimeout(150_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: process.env.CONSOLE_URL! });
  await signUp(page);

  // An agent, and its Triggers tab.
  await page.getByRole('button', { name: 'New agent' }).click();
  await page.getByRole('dialog', { name: 'New agent' }).getByRole('textbox', { name: 'Name' }).fill('Watcher');
  await page.getByRole('dialog', { name: 'New agent' }).getByRole('button', { name: 'Create' }).click();
  await page.getByRole('tab', { name: 'Triggers' }).click();
  await expect(page.getByRole('heading', { name: 'No triggers on this agent' })).toBeVisible();
  await checkScreen(page, 'agent-triggers-empty');

  // A bad cron expression: the API's preview says why on the field; creating it shows the API's 400.
  await page.getByRole('button', { name: 'Add a trigger' }).click();
  let dialog = page.getByRole('dialog', { name: 'New trigger' });
  await dialog.getByRole('textbox', { name: 'Name' }).fill('Broken');
  await dialog.getByRole('textbox', { name: 'Cron expression' }).fill('61 * * * *');
  await expect(dialog.getByRole('textbox', { name: 'Cron expression' })).toHaveAccessibleDescription(/61/);
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog.getByRole('alert')).toContainText('body.configJson.cronExpression');
  await checkScreen(page, 'trigger-bad-cron');
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  // An agent_finished trigger with a filter condition.
  await page.getByRole('button', { name: 'Add a trigger' }).click();
  dialog = page.getByRole('dialog', { name: 'New trigger' });
  await dialog.getByRole('textbox', { name: 'Name' }).fill('After a failure');
  await dialog.getByRole('combobox', { name: 'Type' }).selectOption('agent_finished');
  await dialog.getByRole('combobox', { name: 'Event type' }).selectOption('agent.failed');
  await dialog.getByRole('button', { name: 'Add condition' }).click();
  await dialog.getByRole('textbox', { name: 'Condition 1 path' }).fill('error');
  await dialog.getByRole('combobox', { name: 'Condition 1 comparison' }).selectOption('contains');
  await dialog.getByRole('textbox', { name: 'Condition 1 value' }).fill('timed out');
  await checkScreen(page, 'trigger-new-event');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('heading', { name: /After a failure/ })).toBeVisible();
  await expect(page.getByRole('list', { name: 'Filter conditions' })).toContainText('error contains "timed out"');
  await expect(page.getByLabel('Breadcrumbs').getByRole('link', { name: 'Watcher' })).toHaveAttribute('href', /\/agents\/[0-9a-f-]{36}\/overview$/);

  // Edit: the condition removed (a merge patch that names it null), the event type changed.
  await page.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit After a failure' });
  await edit.getByRole('button', { name: 'Remove condition 1' }).click();
  await edit.getByRole('combobox', { name: 'Event type' }).selectOption('agent.completed');
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(edit).toBeHidden();
  await expect(page.getByText('An event agent.completed, any.')).toBeVisible();
  await expect(page.getByRole('list', { name: 'Filter conditions' })).toHaveCount(0);

  // Fire now: the fire starts a run of the agent, linked.
  await page.getByRole('button', { name: 'Fire now' }).click();
  const fire = page.getByRole('list', { name: 'Fires' }).getByRole('listitem').first();
  await expect(fire).toContainText(/run (queued|running|succeeded)/);
  await expect(fire.getByRole('link', { name: 'Open run' })).toHaveAttribute('href', /\/runs\/[0-9a-f-]{36}$/);
  await fire.getByRole('button', { name: /Show details/ }).click();
  await expect(fire).toContainText('Deliveries that followed');
  await checkScreen(page, 'agent-trigger-page');

  // An incoming webhook: its URL, with a copy button.
  await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
  await page.getByRole('button', { name: 'New webhook' }).click();
  const form = page.getByRole('dialog', { name: 'New webhook' });
  await form.getByText('Incoming: receive requests as events').click();
  await form.getByRole('textbox', { name: 'Name' }).fill('From the CRM');
  await form.getByRole('button', { name: 'Create' }).click();
  const ready = page.getByRole('dialog', { name: 'From the CRM is ready' });
  await ready.getByRole('button', { name: 'Copy webhook URL' }).click();
  expect(await page.evaluate<string>('navigator.clipboard.readText()')).toMatch(/\/api\/hooks\/webhooks\/[0-9a-f-]{36}$/);
  await ready.getByRole('link', { name: 'Open the webhook' }).click();
  await expect(page.getByText('Receives at (POST JSON)')).toBeVisible();
  await checkScreen(page, 'webhook-incoming');

  // API keys: created (shown once), then revoked.
  await page.getByRole('link', { name: 'API keys', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'No API keys' })).toBeVisible();
  await checkScreen(page, 'api-keys-empty');
  await page.getByRole('button', { name: 'New API key' }).click();
  await page.getByRole('dialog', { name: 'New API key' }).getByRole('textbox', { name: 'Name' }).fill('CI');
  await page.getByRole('dialog', { name: 'New API key' }).getByRole('button', { name: 'Create' }).click();
  const key = page.getByRole('dialog', { name: 'CI is ready' });
  await expect(key.getByText('API key: copy it now')).toBeVisible();
  await checkScreen(page, 'api-key-shown-once');
  await key.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByRole('table', { name: 'API keys' })).toContainText('CI');
  await checkScreen(page, 'api-keys');
  await page.getByRole('button', { name: 'Revoke CI' }).click();
  await page.getByRole('dialog', { name: 'Revoke CI?' }).getByRole('button', { name: 'Revoke key' }).click();
  await expect(page.getByRole('heading', { name: 'No API keys' })).toBeVisible();

  // The audit log and usage.
  await page.getByRole('link', { name: 'Audit log', exact: true }).click();
  const audit = page.getByRole('table', { name: 'Audit log' });
  for (const action of ['agent.create', 'trigger.create', 'trigger.fire', 'webhook.create']) await expect(audit).toContainText(action);
  await checkScreen(page, 'audit-log');
  await page.getByRole('link', { name: 'Usage', exact: true }).click();
  const ledger = page.getByRole('table', { name: 'Ledger' });
  await expect(ledger).toContainText('Starting balance');
  await expect(ledger).toContainText('Agent created');
  await expect(page.getByRole('img', { name: /Balance after each/ })).toBeVisible();
  // The run Fire now started used the (scripted) model: today's tokens and runs, as bars.
  await expect(page.getByRole('img', { name: 'Model tokens per day over the last 30 days' })).toBeVisible();
  await expect(page.getByRole('img', { name: 'Runs and tool calls per day over the last 30 days' })).toBeVisible();
  await checkScreen(page, 'usage');
});
