import { startReceiver } from '../helpers/receiver';
import type { Page } from '@playwright/test';
import { checkScreen, expect, newEmail, register, signIn, signUp, test } from './fixtures';

/**
 * A run page whose live stream is refused — 429 when the user or the account has too many streams open, 503
 * when the API process is full: the refusal is shown with its message, and the run's progress still arrives,
 * its steps and status read every few seconds instead. The refusal is the browser's route answering for the
 * API; everything else is the real stack.
 */
/** A new user's active agent with no tools, run from its Runs tab with the input "Say hello". */
async function startPlainRun(page: Page): Promise<void> {
  await signUp(page);
  await page.getByRole('button', { name: 'New agent' }).click();
  const dialog = page.getByRole('dialog', { name: 'New agent' });
  await dialog.getByRole('textbox', { name: 'Name' }).fill('Plain agent');
  await dialog.getByRole('combobox', { name: 'Status' }).selectOption('active');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('tab', { name: 'Runs' }).click();
  await page.getByRole('textbox', { name: 'Input' }).fill('Say hello');
  await page.getByRole('button', { name: 'Run' }).click();
}

for (const refusal of [
  { status: 429, message: 'at most 50 live run streams per account (RUN_STREAMS_PER_ACCOUNT) are open at once: close one, or try again in 30 s', screen: 'run-stream-refused' },
  { status: 503, message: 'This API process has 2000 live run streams open (RUN_STREAMS_PER_PROCESS); try again in 30 s', screen: 'run-stream-refused-503' },
]) {
  test(`a refused live stream (${refusal.status}): its message in an alert, the steps read instead, the run seen to succeed`, async ({ page }) => {
    let refused = 0;
    await page.route('**/api/runs/*/events', (route) => {
      refused++;
      return route.fulfill({ status: refusal.status, headers: { 'content-type': 'application/json', 'retry-after': '30' }, body: JSON.stringify({ message: refusal.message }) });
    });
    await startPlainRun(page);
    await expect(page.getByRole('alert').filter({ hasText: refusal.message })).toBeVisible();
    await expect(page.getByRole('alert').filter({ hasText: 'Live updates are off: the steps are read every few seconds instead' })).toBeVisible();
    // The message already says when to try again: Retry-After is not said a second time.
    expect((await page.getByRole('alert').filter({ hasText: refusal.message }).innerText()).match(/try again in/gi)).toHaveLength(1);
    await expect(page.getByRole('list', { name: 'Steps' }).getByRole('listitem')).toHaveCount(1, { timeout: 30_000 });
    await expect(page.getByLabel('Status').getByText('succeeded')).toBeVisible({ timeout: 30_000 });
    await expect(page.getByText('Hello from the scripted model.').first()).toBeVisible();
    expect(refused).toBeGreaterThan(0);
    await checkScreen(page, refusal.screen);
  });
}

/** A stream refused for want of room is asked for again after its Retry-After: once one opens, the refusal goes and the run is followed live. */
test('a live stream refused once (503) is opened again after its Retry-After; the alert goes', async ({ page }) => {
  let asked = 0;
  await page.route('**/api/runs/*/events', (route) => {
    if (++asked > 1) return route.fallback();
    return route.fulfill({ status: 503, headers: { 'content-type': 'application/json', 'retry-after': '1' }, body: JSON.stringify({ message: 'This API process has 2000 live run streams open (RUN_STREAMS_PER_PROCESS); try again in 1 s' }) });
  });
  await startPlainRun(page);
  const refusal = page.getByRole('alert').filter({ hasText: 'Live updates are off' });
  await expect(refusal).toBeVisible();
  await expect(refusal).toBeHidden({ timeout: 20_000 });
  expect(asked).toBeGreaterThan(1);
  await expect(page.getByRole('list', { name: 'Steps' }).getByRole('listitem')).toHaveCount(1, { timeout: 30_000 });
  await expect(page.getByLabel('Status').getByText('succeeded')).toBeVisible({ timeout: 30_000 });
  await checkScreen(page, 'run-stream-reopened');
});

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
