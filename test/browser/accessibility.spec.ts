import { readFileSync } from 'node:fs';
import { checkScreen, expect, newEmail, PASSWORD, register, signUp, test } from './fixtures';

/**
 * Browser test 5: axe on every screen of the agents and runs part of the console — lists, the agent's tabs,
 * the Markdown preview, the typed forms, the dialogs (create, import, delete) — with no serious or critical
 * violation. On the way: an export leaves the connector's secret out, the import asks for it, and a viewer
 * sees the same screens without a single write control.
 */
test('every agents and runs screen passes axe; export → import asks for the secrets', async ({ page }) => {
  await signUp(page, newEmail('a11y'));
  await page.getByRole('button', { name: 'New agent' }).click();
  await page.getByRole('dialog', { name: 'New agent' }).getByRole('textbox', { name: 'Name' }).fill('Support agent');
  await page.getByRole('dialog', { name: 'New agent' }).getByRole('button', { name: 'Create' }).click();

  // Overview: the Markdown editor's preview, a policy, the model settings from the API's schema.
  await page.getByRole('textbox', { name: 'System prompt' }).fill('# Support\n\nAnswer **briefly**.\n\n- be kind\n- be right');
  await page.getByRole('tab', { name: 'Preview' }).click();
  await expect(page.getByRole('heading', { name: 'Support', level: 1 })).toBeVisible();
  await page.getByRole('button', { name: 'Add policy' }).click();
  await page.getByRole('textbox', { name: 'Policy 1' }).fill('Never promise refunds.');
  await page.getByRole('textbox', { name: 'Max steps' }).fill('4');
  await checkScreen(page, 'agent-overview-preview');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByText('Saved')).toBeVisible();
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Policy 1' })).toHaveValue('Never promise refunds.');
  await expect(page.getByRole('textbox', { name: 'Max steps' })).toHaveValue('4');

  // A connector with secrets: entered once, masked afterwards.
  await page.getByRole('tab', { name: 'Connectors' }).click();
  await expect(page.getByText('No connectors yet')).toBeVisible();
  await checkScreen(page, 'agent-connectors-empty');
  await page.getByRole('button', { name: 'Add connector' }).click();
  const form = page.getByRole('dialog', { name: 'Add a connector' });
  await form.getByRole('combobox', { name: 'Type' }).selectOption('slack');
  await form.getByRole('textbox', { name: 'Name' }).fill('Team Slack');
  await form.getByRole('textbox', { name: 'Bot token' }).fill('xoxb-0000-secret-bot-token');
  await form.getByRole('textbox', { name: 'Signing secret' }).fill('signing-secret-123456');
  await form.getByRole('textbox', { name: 'Team id' }).fill('T0123');
  await checkScreen(page, 'agent-connector-form');
  await form.getByRole('button', { name: 'Add connector' }).click();
  const connectors = page.getByRole('table', { name: 'Connectors' });
  await expect(connectors.getByText('botToken: ••••oken')).toBeVisible();
  expect(await page.content()).not.toContain('xoxb-0000-secret-bot-token');
  await checkScreen(page, 'agent-connectors');

  // Export: the file holds no secret, and says where each was.
  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export' }).click();
  const file = await (await downloading).path();
  const exported = readFileSync(file, 'utf8');
  expect(exported).not.toContain('secret-bot-token');
  expect(JSON.parse(exported).connectors[0].secrets).toEqual(['botToken', 'signingSecret']);

  // Import it: the dialog asks for each secret the export left out.
  await page.getByRole('link', { name: 'All agents' }).click();
  await page.getByRole('button', { name: 'Import' }).click();
  const importer = page.getByRole('dialog', { name: 'Import an agent' });
  const choosing = page.waitForEvent('filechooser');
  await importer.getByRole('button', { name: 'Export file' }).click();
  await (await choosing).setFiles(file);
  await expect(importer.getByText('Support agent')).toBeVisible();
  await importer.getByLabel('Team Slack (slack): botToken').fill('xoxb-imported-token');
  await importer.getByLabel('Team Slack (slack): signingSecret').fill('imported-signing-secret');
  await checkScreen(page, 'agent-import-dialog');
  await importer.getByRole('button', { name: 'Import' }).click();
  await expect(page.getByRole('tab', { name: 'Overview' })).toBeVisible();
  await expect(page.getByText('Balance: 800 units')).toBeVisible();
  await page.getByRole('tab', { name: 'Connectors' }).click();
  await expect(page.getByRole('table', { name: 'Connectors' }).getByText('botToken: ••••oken')).toBeVisible();

  // The triggers and runs tabs, and deleting (a confirmation first).
  await page.getByRole('tab', { name: 'Triggers' }).click();
  await checkScreen(page, 'agent-triggers');
  await page.getByRole('tab', { name: 'Runs' }).click();
  await expect(page.getByText('No runs yet')).toBeVisible();
  await checkScreen(page, 'agent-runs-empty');
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await checkScreen(page, 'agent-delete-confirm');
  await page.getByRole('dialog').getByRole('button', { name: 'Delete agent' }).click();
  await expect(page.getByRole('button', { name: 'New agent' })).toBeVisible();

  // The lists: filtered to nothing, then everything.
  await page.getByRole('searchbox', { name: 'Search agents' }).fill('no such agent');
  await expect(page.getByText('No agent matches')).toBeVisible();
  await checkScreen(page, 'agents-no-match');
  await page.getByRole('searchbox', { name: 'Search agents' }).fill('');
  await expect(page.getByRole('table', { name: 'Agents' }).getByRole('link', { name: 'Support agent' })).toHaveCount(1);
  await checkScreen(page, 'agents-list');
  await page.getByRole('link', { name: 'Runs', exact: true }).click();
  await expect(page.getByText('No runs yet')).toBeVisible();
  await checkScreen(page, 'runs-empty');
});

test('a viewer sees the agents and runs screens without a single write control', async ({ page, request }) => {
  const ownerToken = await register(request, newEmail('owner'));
  const owner = { Authorization: `Bearer ${ownerToken}` };
  const agent = await (await request.post('/api/agents', { headers: owner, data: { name: 'Shared agent', status: 'active' } })).json();
  await request.post(`/api/agents/${agent.id}/tools`, { headers: owner, data: { type: 'coin_prices', name: 'prices', configJson: { coinIds: ['bitcoin'] } } });
  const viewerEmail = newEmail('viewer');
  const invite = await (await request.post('/api/team', { headers: owner, data: { email: viewerEmail, role: 'viewer' } })).json();
  const viewerToken = await register(request, viewerEmail);
  const accepted = await request.post(`/api/invitations/${invite.id}/accept`, { headers: { Authorization: `Bearer ${viewerToken}` }, data: { token: invite.inviteToken } });
  expect(accepted.status()).toBe(200);
  const ownerAccount = (await (await request.get('/api/account', { headers: owner })).json()).id;

  await page.goto('/signin');
  await page.getByRole('textbox', { name: 'Email' }).fill(viewerEmail);
  await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('combobox', { name: 'Account' }).selectOption(ownerAccount);
  await expect(page.getByText('Role: viewer')).toBeVisible();
  await expect(page.getByRole('table', { name: 'Agents' }).getByRole('link', { name: 'Shared agent' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'New agent' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Import' })).toHaveCount(0);
  await expect(page.getByRole('link', { name: 'Audit log' })).toHaveCount(0);
  await checkScreen(page, 'viewer-agents');

  await page.getByRole('link', { name: 'Shared agent' }).click();
  for (const name of ['Pause', 'Activate', 'Export', 'Delete', 'Save changes']) await expect(page.getByRole('button', { name })).toHaveCount(0);
  await expect(page.getByRole('textbox', { name: 'Name' })).toHaveAttribute('readonly', '');
  await checkScreen(page, 'viewer-agent-overview');
  await page.getByRole('tab', { name: 'Tools' }).click();
  await expect(page.getByRole('cell', { name: 'prices', exact: true })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Add tool' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Delete prices' })).toHaveCount(0);
  await expect(page.getByRole('switch', { name: 'prices enabled' })).toBeDisabled();
  await page.getByRole('tab', { name: 'Runs' }).click();
  await expect(page.getByRole('button', { name: 'Run' })).toHaveCount(0);
  await checkScreen(page, 'viewer-agent-runs');
});
