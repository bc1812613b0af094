import type { Page } from '@playwright/test';
import { checkScreen, expect, newEmail, signUp, test } from './fixtures';

const VIEWER_REFUSED = 'The editor or admin role is required: viewers have read-only access to this account';

/**
 * Issue test 3: the owner invites a member as a viewer (the token shown once, copied); the invitee accepts
 * it in a second browser context and acts in the owner's account, where no write control is offered; a
 * write forced through a create form's URL shows the API's 403 message in an alert.
 */
test('invite a viewer: the token copied, accepted elsewhere, no write buttons, a forced write refused', async ({ page, browser, context }) => {
  test.setTimeout(150_000);
  const origin = process.env.CONSOLE_URL!;
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  await signUp(page);
  const ownerAccount = new URL(page.url()).pathname.split('/')[2]!;

  // Something for the viewer to look at: a webhook trigger, its hook URL and token shown once.
  await page.getByRole('link', { name: 'Triggers', exact: true }).click();
  await page.getByRole('button', { name: 'New trigger' }).click();
  const form = page.getByRole('dialog', { name: 'New trigger' });
  await form.getByRole('textbox', { name: 'Name' }).fill('Inbound');
  await form.getByRole('combobox', { name: 'Type' }).selectOption('webhook');
  await form.getByRole('button', { name: 'Create' }).click();
  const hook = page.getByRole('dialog', { name: 'Inbound: its hook' });
  await expect(hook.getByText('Secret token: copy it now')).toBeVisible();
  await expect(hook.getByRole('button', { name: 'Copy hook URL' })).toBeVisible();
  await checkScreen(page, 'trigger-hook-shown-once');
  await hook.getByRole('button', { name: 'Done' }).click();

  // The invitation: a viewer; its token shown once and copied with the button.
  const invitee = newEmail('viewer');
  await page.getByRole('link', { name: 'Team', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Only the owner so far' })).toBeVisible();
  await checkScreen(page, 'team-empty');
  await page.getByRole('button', { name: 'Invite member' }).click();
  const invite = page.getByRole('dialog', { name: 'Invite a member' });
  await invite.getByRole('textbox', { name: 'Email' }).fill(invitee);
  await invite.getByRole('combobox', { name: 'Role' }).selectOption('viewer');
  await checkScreen(page, 'team-invite');
  await invite.getByRole('button', { name: 'Invite' }).click();
  const invited = page.getByRole('dialog', { name: `Invited ${invitee}` });
  const shown = await invited.getByLabel('Invitation token', { exact: true }).textContent();
  await invited.getByRole('button', { name: 'Copy invitation token' }).click();
  await expect(invited.getByRole('button', { name: 'Copied' })).toBeVisible();
  const token = await page.evaluate<string>('navigator.clipboard.readText()');
  expect(token).toBe(shown);
  await checkScreen(page, 'team-invite-token');
  await invited.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByRole('table', { name: 'Members' }).getByRole('row', { name: new RegExp(invitee) })).toContainText('invited');
  await checkScreen(page, 'team-members');

  // The invitee, in a browser of their own: signs up, accepts with the token, lands in the owner's account.
  const other = await browser.newContext({ baseURL: origin, reducedMotion: 'reduce', timezoneId: 'America/New_York', locale: 'en-US' });
  const viewer = await other.newPage();
  const errors = watchErrors(viewer);
  try {
    await signUp(viewer, invitee);
    await viewer.getByRole('link', { name: 'Team', exact: true }).click();
    const invitation = viewer.getByRole('form', { name: /Invitation to/ });
    await expect(invitation).toContainText('as viewer');
    await checkScreen(viewer, 'invitation-to-me');
    await invitation.getByLabel('Invitation token').fill(token);
    await invitation.getByRole('button', { name: 'Accept invitation' }).click();
    await expect(viewer).toHaveURL(new RegExp(`/w/${ownerAccount}/agents$`));
    await expect(viewer.getByText('Role: viewer')).toBeVisible();
    await expect(viewer.getByRole('combobox', { name: 'Account' })).toHaveValue(ownerAccount);

    // No write control anywhere they look.
    await expect(viewer.getByRole('heading', { name: 'No agents yet' })).toBeVisible();
    await expect(viewer.getByRole('button', { name: 'New agent' })).toHaveCount(0);
    await viewer.getByRole('link', { name: 'Triggers', exact: true }).click();
    await viewer.getByRole('link', { name: 'Inbound' }).click();
    await expect(viewer.getByRole('heading', { name: /Inbound/ })).toBeVisible();
    await expect(viewer.getByRole('list', { name: 'Fires' }).or(viewer.getByRole('heading', { name: 'No fires yet' }))).toBeVisible();
    for (const name of ['Fire now', 'Edit', 'Delete', 'Disable']) await expect(viewer.getByRole('button', { name })).toHaveCount(0);
    await checkScreen(viewer, 'viewer-trigger');
    await viewer.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await expect(viewer.getByRole('heading', { name: 'No webhooks yet' })).toBeVisible();
    await expect(viewer.getByRole('button', { name: 'New webhook' })).toHaveCount(0);
    await viewer.getByRole('link', { name: 'Team', exact: true }).click();
    await expect(viewer.getByRole('table', { name: 'Members' })).toContainText(invitee);
    await expect(viewer.getByRole('button', { name: 'Invite member' })).toHaveCount(0);
    await expect(viewer.getByRole('button', { name: /^Remove / })).toHaveCount(0);
    await expect(viewer.getByRole('button', { name: 'Leave' })).toBeVisible();
    await checkScreen(viewer, 'viewer-team');

    // A write forced through the create form's URL: the API's 403, in an alert.
    await viewer.goto(`/w/${ownerAccount}/webhooks?new`);
    const create = viewer.getByRole('dialog', { name: 'New webhook' });
    await create.getByRole('textbox', { name: 'Name' }).fill('Not mine to make');
    await create.getByRole('textbox', { name: 'Endpoint URL' }).fill('https://example.com/hook');
    await create.getByRole('button', { name: 'Create' }).click();
    await expect(create.getByRole('alert')).toContainText(VIEWER_REFUSED);
    await checkScreen(viewer, 'viewer-forced-write');
    expect(errors).toEqual([]);
  } finally {
    await other.close();
  }
});

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/.test(message.text())) errors.push(message.text());
  });
  return errors;
}
