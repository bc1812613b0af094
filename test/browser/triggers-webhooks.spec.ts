import { startReceiver } from '../helpers/receiver';
import { checkScreen, expect, signUp, test } from './fixtures';

/**
 * Issue test 2: an outgoing webhook and a cron trigger firing every second — fires arrive in `Fires` and
 * deliveries in `Deliveries` without reloading, each linked to the other through the trigger's timeline;
 * then the receiver fails, a delivery fails, `Retry` delivers it; each attempt shows the receiver's answer
 * (status and response body). The receiver is this test's own, on
 * loopback; the stack's retry schedule is two attempts a second apart.
 */
test('a cron trigger and an outgoing webhook: fires and deliveries live, a failed delivery retried', async ({ page }) => {
  test.setTimeout(180_000);
  const steps: Array<() => unknown> = [];
  let failing = false;
  const receiver = await startReceiver({ after: (fn) => void steps.push(fn) }, () => (failing ? { status: 503, body: 'down for maintenance' } : { status: 200 }));
  try {
    await signUp(page);

    // The webhook: outgoing to the receiver, every event, a generated signing secret shown once.
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await expect(page.getByRole('heading', { name: 'No webhooks yet' })).toBeVisible();
    await checkScreen(page, 'webhooks-empty');
    await page.getByRole('button', { name: 'New webhook' }).click();
    const form = page.getByRole('dialog', { name: 'New webhook' });
    await form.getByRole('textbox', { name: 'Name' }).fill('Receiver');
    await form.getByRole('textbox', { name: 'Endpoint URL' }).fill(`${receiver.url}/hook`);
    await form.getByRole('button', { name: 'Generate' }).click();
    await checkScreen(page, 'webhook-new');
    await form.getByRole('button', { name: 'Create' }).click();
    const ready = page.getByRole('dialog', { name: 'Receiver is ready' });
    await expect(ready.getByText('Signing secret: copy it now')).toBeVisible();
    await expect(ready.getByLabel('Signing secret', { exact: true })).toHaveText(/^whsec_/);
    await checkScreen(page, 'webhook-secret-shown-once');
    await ready.getByRole('link', { name: 'Open the webhook' }).click();
    await expect(page.getByRole('heading', { name: 'No deliveries yet' })).toBeVisible();
    const webhookUrl = page.url();

    // The trigger: cron every second, in words, with the API's next five times.
    await page.getByRole('link', { name: 'Triggers', exact: true }).click();
    await expect(page.getByRole('heading', { name: 'No triggers yet' })).toBeVisible();
    await checkScreen(page, 'triggers-empty');
    await page.getByRole('button', { name: 'New trigger' }).click();
    const dialog = page.getByRole('dialog', { name: 'New trigger' });
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Every second');
    await dialog.getByRole('textbox', { name: 'Cron expression' }).fill('* * * * * *');
    await expect(dialog.getByText('In words: Every second')).toBeVisible();
    await expect(dialog.getByRole('list', { name: 'Next 5 fire times' }).getByRole('listitem')).toHaveCount(5);
    await checkScreen(page, 'trigger-new-cron');
    await dialog.getByRole('button', { name: 'Create' }).click();

    // Its page: fires arrive in Fires without a reload.
    await expect(page.getByRole('heading', { name: /Every second/ })).toBeVisible();
    const fires = page.getByRole('list', { name: 'Fires' });
    await expect(fires.getByRole('listitem').nth(2)).toBeVisible({ timeout: 30_000 });
    const seen = await fires.getByRole('listitem').count();
    await expect(async () => expect(await fires.getByRole('listitem').count()).toBeGreaterThan(seen)).toPass({ timeout: 15_000 });
    await checkScreen(page, 'trigger-fires');

    // The timeline: each expected second, fired, with the delivery that followed, linked.
    await page.getByRole('tab', { name: 'Timeline' }).click();
    const timeline = page.getByRole('table', { name: 'Timeline' });
    const delivered = timeline.getByRole('link', { name: /Delivery to Receiver of trigger\.fired: succeeded/ }).first();
    await expect(delivered).toBeVisible({ timeout: 20_000 });
    await checkScreen(page, 'trigger-timeline');
    // Its delivery is a link: the webhook's page, that delivery opened on its attempts.
    await delivered.click();
    await expect(page).toHaveURL(/\/webhooks\/[0-9a-f-]{36}\?delivery=[0-9a-f-]{36}$/);
    await expect(page.getByRole('table', { name: 'Attempts' }).first()).toContainText('HTTP 200');
    await page.goBack();
    await page.getByRole('button', { name: 'Disable' }).click();
    await expect(page.getByRole('button', { name: 'Enable' })).toBeVisible();

    // The webhook's page: the deliveries came in without a reload; each opens to its attempts.
    await page.goto(webhookUrl);
    const deliveries = page.getByRole('list', { name: 'Deliveries' });
    await expect(deliveries.getByRole('listitem').filter({ hasText: 'succeeded' }).first()).toBeVisible();
    await deliveries.getByRole('listitem').first().getByRole('button', { name: /Show attempts/ }).click();
    await expect(deliveries.getByRole('table', { name: 'Attempts' }).first()).toContainText('HTTP 200');
    await checkScreen(page, 'webhook-deliveries');

    // The receiver fails: a test event's delivery fails (both attempts), then Retry delivers it.
    failing = true;
    await page.getByRole('button', { name: 'Send test' }).click();
    const test_ = deliveries.getByRole('listitem').filter({ hasText: 'webhook.test' });
    await expect(test_.getByText('failed', { exact: true })).toBeVisible({ timeout: 20_000 });
    await expect(test_).toContainText('2 attempts, last answered 503');
    await checkScreen(page, 'webhook-failed-delivery');
    failing = false;
    await test_.getByRole('button', { name: 'Retry' }).click();
    await expect(test_.getByText('succeeded', { exact: true })).toBeVisible({ timeout: 20_000 });
    await expect(test_.getByRole('button', { name: 'Retry' })).toHaveCount(0);
    await test_.getByRole('button', { name: /Show attempts/ }).click();
    await expect(test_.getByRole('table', { name: 'Attempts' })).toContainText('retry 1');
    // Each attempt shows what the receiver answered: the failures' text, then the retry's.
    const attempts = test_.getByRole('table', { name: 'Attempts' }).getByRole('row');
    await expect(attempts).toHaveCount(4);
    await expect(attempts.nth(1)).toContainText('HTTP 503');
    await expect(attempts.nth(1)).toContainText('down for maintenance');
    await expect(attempts.nth(2)).toContainText('down for maintenance');
    await expect(attempts.nth(3)).toContainText('HTTP 200');
    await expect(attempts.nth(3).getByRole('cell').last()).toHaveText('ok');
    await expect(page.getByText(/attempts in the window/)).toBeVisible();
    await checkScreen(page, 'webhook-retried');
    const webhookTests = receiver.requests.filter((r) => r.body.includes('"webhook.test"'));
    expect(webhookTests.map((r) => r.headers['webhook-id'])).toEqual(Array(3).fill(webhookTests[0]!.headers['webhook-id']));
  } finally {
    for (const step of steps.reverse()) await step();
  }
});
