import { startEverythingServer, type RunningMcpServer } from '../helpers/mcp-servers';
import { checkScreen, expect, signUp, test } from './fixtures';
import { SCRIPTED_ARGUMENT } from './stack';

/**
 * An MCP tool from the console (docs/console.md § MCP tools): added with Type "MCP server", its URL and a
 * header; its page lists the Functions the reference server-everything (on loopback) offers within its
 * allow-list; a server that can't be reached is said so on its page; a run of the agent shows the tool
 * step with the server's real answer.
 */
let everything: RunningMcpServer;
const cleanups: Array<() => unknown> = [];

test.beforeAll(async () => {
  everything = await startEverythingServer({ after: (fn) => void cleanups.push(fn) });
});
test.afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn();
});

test('add an MCP server tool → its page lists its Functions → a run calls it and shows its real answer', async ({ page }) => {
  await signUp(page);
  await page.getByRole('button', { name: 'New agent' }).click();
  const dialog = page.getByRole('dialog', { name: 'New agent' });
  await dialog.getByRole('textbox', { name: 'Name' }).fill('MCP agent');
  await dialog.getByRole('combobox', { name: 'Status' }).selectOption('active');
  await dialog.getByRole('button', { name: 'Create' }).click();

  await page.getByRole('tab', { name: 'Tools' }).click();
  await page.getByRole('button', { name: 'Add tool' }).click();
  const form = page.getByRole('dialog', { name: 'Add a tool' });
  await form.getByRole('combobox', { name: 'Type' }).selectOption({ label: 'MCP server' });
  await form.getByRole('textbox', { name: 'Name' }).fill('everything');
  await form.getByRole('textbox', { name: 'URL' }).fill(everything.url);
  await form.getByRole('button', { name: 'Add header' }).click();
  await form.getByRole('textbox', { name: 'Headers 1 name' }).fill('Authorization');
  await form.getByRole('textbox', { name: 'Headers 1 value' }).fill('Bearer console-test-token');
  await form.getByRole('textbox', { name: 'Functions (allow-list)' }).fill('echo');
  await form.getByRole('textbox', { name: 'Functions (allow-list)' }).press('Enter');
  await checkScreen(page, 'mcp-tool-form');
  await form.getByRole('button', { name: 'Add tool' }).click();
  await expect(form).toBeHidden();
  const tools = page.getByRole('table', { name: 'Tools' });
  await expect(tools.getByText(`${everything.url} · echo`)).toBeVisible();

  // Its page: the functions the server lists, within the allow-list, each with its description and schema.
  await tools.getByRole('link', { name: 'everything' }).click();
  const functions = page.getByRole('list', { name: 'Functions' });
  await expect(functions.getByRole('listitem')).toHaveCount(1, { timeout: 20_000 });
  const echo = functions.getByRole('listitem', { name: 'echo' });
  await expect(echo.getByText('Echoes back the input string')).toBeVisible();
  await expect(echo.getByLabel('Input schema of echo')).toContainText('"message"');
  await expect(page.getByText('••••oken')).toBeVisible();
  await checkScreen(page, 'mcp-tool-page');

  // Run it: the model calls everything_echo; the step shows what the server answered.
  await page.getByRole('link', { name: 'MCP agent: tools' }).click();
  await page.getByRole('tab', { name: 'Runs' }).click();
  await page.getByRole('textbox', { name: 'Input' }).fill('Say it back');
  await page.getByRole('button', { name: 'Run' }).click();
  const steps = page.getByRole('list', { name: 'Steps' });
  await expect(steps.getByRole('listitem')).toHaveCount(3, { timeout: 30_000 });
  await expect(steps.getByRole('listitem').nth(1)).toContainText('everything_echo');
  await expect(steps.getByRole('listitem').nth(1)).toContainText(`Echo: ${SCRIPTED_ARGUMENT}`);
  await expect(page.getByText('succeeded').first()).toBeVisible();
  await expect(page.getByText(`The tool said: Echo: ${SCRIPTED_ARGUMENT}`).first()).toBeVisible();
  await checkScreen(page, 'mcp-run');
});

test("an MCP tool whose server can't be reached says so on its page, with the API's message", async ({ page }) => {
  await signUp(page);
  const url = new URL(page.url());
  const accountId = url.pathname.split('/')[2]!;
  await page.getByRole('button', { name: 'New agent' }).click();
  const dialog = page.getByRole('dialog', { name: 'New agent' });
  await dialog.getByRole('textbox', { name: 'Name' }).fill('Lonely agent');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('tab', { name: 'Tools' }).click();
  await page.getByRole('button', { name: 'Add tool' }).click();
  const form = page.getByRole('dialog', { name: 'Add a tool' });
  await form.getByRole('combobox', { name: 'Type' }).selectOption({ label: 'MCP server' });
  await form.getByRole('textbox', { name: 'Name' }).fill('gone');
  await form.getByRole('textbox', { name: 'URL' }).fill('http://127.0.0.1:9/mcp');
  await form.getByRole('button', { name: 'Add tool' }).click();
  await expect(form).toBeHidden();
  await page.getByRole('table', { name: 'Tools' }).getByRole('link', { name: 'gone' }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${accountId}/agents/[0-9a-f-]{36}/tools/[0-9a-f-]{36}$`));
  const alert = page.getByRole('alert').filter({ hasText: 'the MCP server could not be reached' });
  await expect(alert).toBeVisible({ timeout: 20_000 });
  await expect(alert).toContainText('ECONNREFUSED');
  await expect(page.getByRole('list', { name: 'Functions' })).toHaveCount(0);
  await checkScreen(page, 'mcp-tool-unreachable');
});
