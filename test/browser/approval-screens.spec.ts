import { startReceiver } from '../helpers/receiver';
import { checkScreen, expect, newEmail, register, signIn, test } from './fixtures';

/**
 * People in the loop from the console (docs/console.md § Approvals): the scripted model asks for a tool that
 * requires approval, so the run waits. The `Approvals` link counts it and its page lists it; a viewer sees
 * the run's `Approval` group without `Approve`/`Reject`; the owner edits the `Arguments` — the API's refusal
 * of arguments that break the tool's schema shows in an alert — then approves, and the run's steps go on
 * live to `succeeded`; this test's receiver got the call once, with the edited arguments.
 */
test('a waiting run: counted and listed under Approvals, approved from its page with edited arguments, then goes on live to succeeded', async ({ page, request }) => {
  test.setTimeout(120_000);
  const cleanups: Array<() => unknown> = [];
  const payments = await startReceiver({ after: (fn) => void cleanups.push(fn) }, () => ({ body: { paid: true } }));
  try {
    const ownerEmail = newEmail('owner');
    const owner = { Authorization: `Bearer ${await register(request, ownerEmail)}` };
    const account = (await (await request.get('/api/account', { headers: owner })).json()).id;
    const agent = await (await request.post('/api/agents', { headers: owner, data: { name: 'Paying agent', status: 'active' } })).json();
    const parameters = { type: 'object', properties: { amount: { type: 'number', maximum: 100 } }, required: ['amount'], additionalProperties: false };
    const tool = await request.post(`/api/agents/${agent.id}/tools`, {
      headers: owner,
      data: { type: 'custom', name: 'pay', requiresApproval: true, configJson: { endpoint: `${payments.url}/pay`, method: 'POST', bodyTemplate: '{{input}}', parameters } },
    });
    expect(tool.status(), await tool.text()).toBe(201);
    const viewerEmail = newEmail('viewer');
    const invite = await (await request.post('/api/team', { headers: owner, data: { email: viewerEmail, role: 'viewer' } })).json();
    const viewerToken = await register(request, viewerEmail);
    const accepted = await request.post(`/api/invitations/${invite.id}/accept`, { headers: { Authorization: `Bearer ${viewerToken}` }, data: { token: invite.inviteToken } });
    expect(accepted.status()).toBe(200);

    // The scripted model asks for `pay` with { amount: 1 }: the run waits, nothing is called.
    const run = await (await request.post(`/api/agents/${agent.id}/runs`, { headers: owner, data: { input: 'Pay the invoice' } })).json();
    await expect.poll(async () => (await (await request.get(`/api/runs/${run.id}`, { headers: owner })).json()).status, { timeout: 30_000 }).toBe('waiting');
    expect(payments.requests).toHaveLength(0);

    // The viewer sees the approval, not the buttons.
    await signIn(page, viewerEmail);
    await page.goto(`/w/${account}/runs/${run.id}`);
    const viewerGroup = page.getByRole('group', { name: 'Approval' });
    await expect(viewerGroup).toBeVisible({ timeout: 20_000 });
    await expect(viewerGroup.getByRole('textbox', { name: 'Arguments' })).toHaveValue(/"amount": 1/);
    await expect(page.getByRole('button', { name: 'Approve' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Reject' })).toHaveCount(0);
    await page.getByRole('button', { name: 'Sign out' }).click();

    // The owner: the navigation counts it; the Approvals page lists it, linking to its run.
    await signIn(page, ownerEmail);
    const nav = page.getByRole('link', { name: 'Approvals', exact: true });
    await expect(nav).toHaveAccessibleDescription('1 pending', { timeout: 20_000 });
    await nav.click();
    const pending = page.getByRole('list', { name: 'Pending approvals' });
    await expect(pending.getByRole('listitem')).toHaveCount(1, { timeout: 20_000 });
    await expect(pending.getByRole('listitem').first()).toContainText('pay');
    await expect(pending.getByRole('listitem').first()).toContainText('Requested');
    await expect(pending.getByRole('listitem').first()).toContainText('Expires');
    await checkScreen(page, 'approvals-list');
    await pending.getByRole('link', { name: 'pay' }).click();
    await expect(page).toHaveURL(new RegExp(`/w/${account}/runs/${run.id}$`));

    // The run's page: waiting, with the Approval group.
    await expect(page.getByLabel('Status')).toHaveText('waiting');
    const approval = page.getByRole('group', { name: 'Approval' });
    const args = approval.getByRole('textbox', { name: 'Arguments' });
    await expect(args).toHaveValue(/"amount": 1/);
    await expect(approval.getByRole('textbox', { name: 'Comment' })).toBeVisible();
    const steps = page.getByRole('list', { name: 'Steps' });
    await expect(steps.getByRole('listitem')).toHaveCount(1);
    await checkScreen(page, 'run-approval');

    // Arguments that break the tool's schema: the API's 400, in an alert; nothing called.
    await args.fill('{ "amount": 500 }');
    await approval.getByRole('button', { name: 'Approve' }).click();
    await expect(approval.getByRole('alert')).toContainText('amount');
    expect(payments.requests).toHaveLength(0);
    await checkScreen(page, 'run-approval-refused');

    // Approved with arguments that fit: the steps go on live, and the run succeeds.
    await args.fill('{ "amount": 7 }');
    await approval.getByRole('textbox', { name: 'Comment' }).fill('within budget');
    await approval.getByRole('button', { name: 'Approve' }).click();
    await expect(steps.getByRole('listitem')).toHaveCount(4, { timeout: 30_000 });
    await expect(steps.getByRole('listitem').nth(1)).toContainText('approval');
    await expect(steps.getByRole('listitem').nth(2)).toContainText('"paid": true');
    await expect(page.getByLabel('Status')).toHaveText('succeeded', { timeout: 30_000 });
    await expect(page.getByRole('group', { name: 'Approval' })).toHaveCount(0);
    expect(payments.requests).toHaveLength(1);
    expect(JSON.parse(payments.requests[0]!.body)).toEqual({ amount: 7 });
    await checkScreen(page, 'run-approved');

    // Nothing pending any more.
    await page.getByRole('link', { name: 'Approvals', exact: true }).click();
    await expect(page.getByRole('heading', { name: 'Nothing waits for a decision' })).toBeVisible();
    await expect(page.getByRole('link', { name: 'Approvals', exact: true })).toHaveAccessibleDescription('0 pending');
  } finally {
    for (const step of cleanups.reverse()) await step();
  }
});

/**
 * Without the live stream (refused: the browser's route answers 429 for the API), a waiting run's approvals
 * are read instead: the `Approval` group still shows, and `Reject` with a comment lets the run go on — the
 * model is told, the tool is never called.
 */
test('a waiting run whose live stream is refused: its Approval read instead, rejected with a comment, the run goes on without the call', async ({ page, request }) => {
  test.setTimeout(120_000);
  const cleanups: Array<() => unknown> = [];
  const payments = await startReceiver({ after: (fn) => void cleanups.push(fn) }, () => ({ body: { paid: true } }));
  try {
    await page.route('**/api/runs/*/events', (route) =>
      route.fulfill({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '30' }, body: JSON.stringify({ message: 'At most 10 live run streams per user are open at once' }) }),
    );
    const email = newEmail('owner');
    const owner = { Authorization: `Bearer ${await register(request, email)}` };
    const account = (await (await request.get('/api/account', { headers: owner })).json()).id;
    const agent = await (await request.post('/api/agents', { headers: owner, data: { name: 'Careful agent', status: 'active' } })).json();
    const tool = await request.post(`/api/agents/${agent.id}/tools`, {
      headers: owner,
      data: { type: 'custom', name: 'transfer', requiresApproval: true, configJson: { endpoint: `${payments.url}/transfer`, method: 'POST' } },
    });
    expect(tool.status(), await tool.text()).toBe(201);
    const run = await (await request.post(`/api/agents/${agent.id}/runs`, { headers: owner, data: { input: 'Move the money' } })).json();
    await expect.poll(async () => (await (await request.get(`/api/runs/${run.id}`, { headers: owner })).json()).status, { timeout: 30_000 }).toBe('waiting');

    await signIn(page, email);
    await page.goto(`/w/${account}/runs/${run.id}`);
    await expect(page.getByRole('alert').filter({ hasText: 'At most 10 live run streams per user are open at once. Try again in 30 s.' })).toBeVisible();
    const approval = page.getByRole('group', { name: 'Approval' });
    await expect(approval).toBeVisible({ timeout: 20_000 });
    await expect(approval).toContainText('transfer');
    await approval.getByRole('textbox', { name: 'Comment' }).fill('not today');
    await approval.getByRole('button', { name: 'Reject' }).click();
    await expect(page.getByLabel('Status')).toHaveText('succeeded', { timeout: 30_000 });
    await expect(page.getByRole('group', { name: 'Approval' })).toHaveCount(0);
    // The model's next turn read the rejection as the tool's result (the scripted model says it back).
    const answer = page.getByText(/^The tool said: /).first();
    await expect(answer).toContainText('"rejected":true', { timeout: 10_000 });
    await expect(answer).toContainText('"comment":"not today"');
    expect(payments.requests).toHaveLength(0);
    await checkScreen(page, 'run-approval-rejected');
  } finally {
    for (const step of cleanups.reverse()) await step();
  }
});
