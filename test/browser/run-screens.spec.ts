import type { APIRequestContext, Page } from '@playwright/test';
import { startReceiver } from '../helpers/receiver';
import { checkScreen, expect, newEmail, PASSWORD, signUp, test } from './fixtures';

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

/** Registers through the API (a script's way), answering the access token. */
async function register(request: APIRequestContext, email: string): Promise<string> {
  const res = await request.post('/api/auth/register', { data: { email, password: PASSWORD } });
  expect(res.status()).toBe(201);
  return (await res.json()).accessToken;
}

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto('/signin');
  await page.getByRole('textbox', { name: 'Email' }).fill(email);
  await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

/**
 * Cancel: a run whose tool call hangs (this test's own receiver holds its answer longer than the stack's
 * TOOL_TIMEOUT_MS, two minutes) is running;
 * a viewer of the account sees it without a Cancel run button; the owner cancels it from its page, after
 * confirming, and sees it end failed, "The run was cancelled", without reloading; the button is gone.
 */
test('a running run cancelled from its page: confirmed, it ends live as cancelled; a viewer has no Cancel run', async ({ page, request }) => {
  test.setTimeout(120_000);
  const cleanups: Array<() => unknown> = [];
  const slow = await startReceiver({ after: (fn) => void cleanups.push(fn) }, () => ({ body: { price: 1 }, delayMs: 180_000 }));
  try {
    const ownerEmail = newEmail('owner');
    const owner = { Authorization: `Bearer ${await register(request, ownerEmail)}` };
    const account = (await (await request.get('/api/account', { headers: owner })).json()).id;
    const agent = await (await request.post('/api/agents', { headers: owner, data: { name: 'Slow agent', status: 'active' } })).json();
    const tool = await request.post(`/api/agents/${agent.id}/tools`, { headers: owner, data: { type: 'custom', name: 'slow lookup', configJson: { endpoint: `${slow.url}/price`, method: 'GET' } } });
    expect(tool.status()).toBe(201);
    const viewerEmail = newEmail('viewer');
    const invite = await (await request.post('/api/team', { headers: owner, data: { email: viewerEmail, role: 'viewer' } })).json();
    const viewerToken = await register(request, viewerEmail);
    const accepted = await request.post(`/api/invitations/${invite.id}/accept`, { headers: { Authorization: `Bearer ${viewerToken}` }, data: { token: invite.inviteToken } });
    expect(accepted.status()).toBe(200);
    const run = await (await request.post(`/api/agents/${agent.id}/runs`, { headers: owner, data: { input: 'What does it cost?' } })).json();
    await expect.poll(() => slow.requests.length, { timeout: 30_000 }).toBe(1);
    const runUrl = `/w/${account}/runs/${run.id}`;

    // The viewer: the run is running; nothing offers to cancel it.
    await signIn(page, viewerEmail);
    await page.goto(runUrl);
    await expect(page.getByLabel('Status')).toHaveText('running');
    await expect(page.getByRole('list', { name: 'Steps' }).getByRole('listitem')).toHaveCount(1);
    await expect(page.getByRole('button', { name: 'Cancel run' })).toHaveCount(0);
    await page.getByRole('button', { name: 'Sign out' }).click();

    // The owner cancels it, after confirming; the page follows it to its end without a reload.
    await signIn(page, ownerEmail);
    await page.goto(runUrl);
    await expect(page.getByLabel('Status')).toHaveText('running');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this run?' });
    await expect(dialog.getByRole('button', { name: 'Keep running' })).toBeVisible();
    await checkScreen(page, 'run-cancel-confirm');
    await dialog.getByRole('button', { name: 'Cancel run' }).click();
    await expect(page.getByLabel('Status')).toHaveText('failed', { timeout: 20_000 });
    await expect(page.getByRole('alert').filter({ hasText: 'The run was cancelled' })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Cancel run' })).toHaveCount(0);
    await expect(page.getByRole('list', { name: 'Steps' }).getByRole('listitem')).toHaveCount(1);
    await expect.poll(() => slow.requests[0]?.aborted, { timeout: 10_000 }).toBe(true);
    await checkScreen(page, 'run-cancelled');
  } finally {
    for (const step of cleanups.reverse()) await step();
  }
});
