import { checkScreen, expect, newEmail, register, signIn, test } from './fixtures';

/**
 * `Rerun from here` on a step of an ended run: a new run whose steps before that one are copied (a `Copied`
 * badge, and ", copied" in the step's name), with "Rerun of <run> from step N" linking back; the original
 * lists it under `Reruns`. The agent calls its tool, then answers: three steps, rerun from the third.
 */
test('Rerun from here: a new run whose earlier steps are marked copied; the runs link both ways', async ({ page, request }) => {
  const email = newEmail('rerun');
  const headers = { Authorization: `Bearer ${await register(request, email)}` };
  const account = (await (await request.get('/api/account', { headers })).json()).id as string;
  const agent = await (await request.post('/api/agents', { headers, data: { name: 'Price agent', status: 'active' } })).json();
  const tool = await request.post(`/api/agents/${agent.id}/tools`, {
    headers,
    data: { type: 'custom', name: 'price lookup', configJson: { endpoint: `${process.env.CONSOLE_RECEIVER_URL}/price`, method: 'GET' } },
  });
  expect(tool.status()).toBe(201);
  const original = await (await request.post(`/api/agents/${agent.id}/runs`, { headers, data: { input: 'What does it cost?' } })).json();
  await expect.poll(async () => (await (await request.get(`/api/runs/${original.id}`, { headers })).json()).status, { timeout: 60_000 }).toBe('succeeded');

  await signIn(page, email);
  await page.goto(`/w/${account}/runs/${original.id}`);
  const steps = page.getByRole('list', { name: 'Steps' }).getByRole('listitem');
  await expect(steps).toHaveCount(3);
  await expect(page.getByText('Copied', { exact: true })).toHaveCount(0);
  await steps.nth(2).getByRole('button', { name: 'Rerun from here' }).click();
  const dialog = page.getByRole('dialog', { name: 'Rerun from step 3?' });
  await expect(dialog).toContainText('steps 1 to 2 are copied');
  await checkScreen(page, 'run-rerun-confirm');
  await dialog.getByRole('button', { name: 'Rerun', exact: true }).click();

  // The new run: its own page, linked to the original, the first two steps copied, the third made anew.
  await expect(page).not.toHaveURL(new RegExp(original.id));
  await expect(page.getByText(/Rerun of run [0-9a-f]{8} from step 3/)).toBeVisible();
  await expect(page.getByLabel('Status')).toHaveText('succeeded', { timeout: 60_000 });
  await expect(steps).toHaveCount(3);
  await expect(page.getByRole('listitem', { name: /^Step 1: .*, copied$/ })).toHaveCount(1);
  await expect(page.getByRole('listitem', { name: /^Step 2: .*, copied$/ })).toHaveCount(1);
  await expect(page.getByRole('listitem', { name: /^Step 3: .*, copied$/ })).toHaveCount(0);
  await expect(steps.nth(0).getByText('Copied', { exact: true })).toBeVisible();
  await expect(steps.nth(2).getByText('Copied', { exact: true })).toHaveCount(0);
  const rerunId = page.url().split('/').at(-1)!;
  await checkScreen(page, 'run-rerun');

  // Back to the original: its Reruns list the new run.
  await page.getByRole('link', { name: `run ${original.id.slice(0, 8)}` }).click();
  await expect(page).toHaveURL(new RegExp(`/runs/${original.id}$`));
  const reruns = page.getByRole('list', { name: 'Reruns' });
  await expect(reruns.getByRole('link', { name: `Run ${rerunId.slice(0, 8)}` })).toBeVisible();
  await expect(reruns).toContainText('from step 3');
  await checkScreen(page, 'run-reruns');
});
