import type { APIRequestContext } from '@playwright/test';
import { checkScreen, expect, newEmail, register, signIn, test } from './fixtures';

/** An owner with an active agent (the stack's scripted model: "Write <n> words, one every <ms> ms" streams that). */
async function ownerWithAgent(request: APIRequestContext) {
  const email = newEmail('streamer');
  const headers = { Authorization: `Bearer ${await register(request, email)}` };
  const account = (await (await request.get('/api/account', { headers })).json()).id as string;
  const agent = await (await request.post('/api/agents', { headers, data: { name: 'Writer', status: 'active' } })).json();
  return { email, headers, account, agentId: agent.id as string };
}

/**
 * The run page shows a model step's text growing as the deltas come, before the step ends: in a block named
 * `Model output so far` (not a live region), which the stored step replaces when it arrives.
 */
test('the run page shows the text growing before the step ends; the stored step then replaces it', async ({ page, request }) => {
  const owner = await ownerWithAgent(request);
  await signIn(page, owner.email);
  await page.goto(`/w/${owner.account}/agents/${owner.agentId}/runs`);
  await page.getByRole('textbox', { name: 'Input' }).first().fill('Write 300 words, one every 40 ms');
  await page.getByRole('button', { name: 'Run', exact: true }).first().click();
  const output = page.getByLabel('Model output so far');
  await expect(output).toContainText('word5 ', { timeout: 30_000 });
  // Still being written: no step yet, and the text grows while one looks.
  await expect(page.getByRole('list', { name: 'Steps' }).getByRole('listitem')).toHaveCount(0);
  const first = (await output.textContent())!.length;
  await expect.poll(async () => (await output.textContent())?.length ?? 0, { timeout: 10_000 }).toBeGreaterThan(first + 20);
  await expect(output).not.toContainText('word300');
  await expect(output).not.toHaveAttribute('aria-live', /.+/);
  await checkScreen(page, 'run-text-growing');
  // The step arrives: it holds the whole text, and the growing text is gone.
  await expect(page.getByLabel('Status')).toHaveText('succeeded', { timeout: 60_000 });
  await expect(output).toHaveCount(0);
  const step = page.getByRole('list', { name: 'Steps' }).getByRole('listitem');
  await expect(step).toHaveCount(1);
  await expect(step.getByLabel('Message')).toContainText('word1 word2 word3');
  await expect(step.getByLabel('Message')).toContainText('word300');
});

/**
 * A 20,000-token answer streamed one token a chunk: the page stays usable while it grows. Prints what it
 * measured (deltas the API sent, the page's long tasks, its worst event-loop delay, the time of clicks made
 * meanwhile); asserts only loose bounds — the machine is shared, timings are not the test.
 */
test('a 20,000-token answer: the page keeps answering while the text grows (figures printed)', async ({ page, request }) => {
  test.setTimeout(240_000);
  const words = 20_000;
  const owner = await ownerWithAgent(request);
  // In the page (a script: these tests compile without the DOM's types): its long tasks, and its worst
  // event-loop delay seen by a 50 ms interval.
  await page.addInitScript(`
    window.longTasks = [];
    window.worstLag = 0;
    new PerformanceObserver((list) => list.getEntries().forEach((e) => window.longTasks.push(e.duration))).observe({ type: 'longtask', buffered: true });
    let last = performance.now();
    setInterval(() => {
      const now = performance.now();
      window.worstLag = Math.max(window.worstLag, now - last - 50);
      last = now;
    }, 50);
  `);
  await signIn(page, owner.email);
  const run = await (await request.post(`/api/agents/${owner.agentId}/runs`, { headers: owner.headers, data: { input: `Write ${words} words, one every 1 ms` } })).json();
  // A stream of its own counts the deltas the API sends (the body is read whole when the run is done).
  const counted = request.get(`/api/runs/${run.id}/events`, { headers: { ...owner.headers, 'Account-Id': owner.account }, timeout: 220_000 });
  await page.goto(`/w/${owner.account}/runs/${run.id}`);
  const output = page.getByLabel('Model output so far');
  await expect(output).toContainText('word1 ', { timeout: 60_000 });
  const started = Date.now();
  await page.evaluate('window.longTasks = []; window.worstLag = 0');
  // Clicks on another control while it streams: the run's input block takes focus each time.
  const clicks: number[] = [];
  const input = page.getByLabel('Input', { exact: true });
  let shown = 0;
  while ((await output.count()) > 0 && clicks.length < 40) {
    const t0 = Date.now();
    await input.click({ timeout: 20_000 }).catch(() => undefined);
    clicks.push(Date.now() - t0);
    shown = Math.max(shown, ((await output.textContent({ timeout: 1_000 }).catch(() => '')) ?? '').length);
    await page.waitForTimeout(400);
  }
  await expect(page.getByLabel('Status')).toHaveText('succeeded', { timeout: 180_000 });
  const streamedMs = Date.now() - started;
  const { longTasks, worstLag } = (await page.evaluate('({ longTasks: window.longTasks, worstLag: window.worstLag })')) as { longTasks: number[]; worstLag: number };
  const body = await (await counted).text();
  const deltas = body.split('\nevent: delta\n').length - 1 + (body.startsWith('event: delta\n') ? 1 : 0);
  const sorted = [...clicks].sort((a, b) => a - b);
  console.log(
    `[run-streaming] ${words} words streamed in ${(streamedMs / 1000).toFixed(1)} s: ${deltas} delta events from the API, ` +
      `${shown.toLocaleString()} characters seen growing; page long tasks ${longTasks.length} (total ${Math.round(longTasks.reduce((a, b) => a + b, 0))} ms, ` +
      `longest ${Math.round(Math.max(0, ...longTasks))} ms); worst event-loop delay ${Math.round(worstLag)} ms; ` +
      `${clicks.length} clicks meanwhile: median ${sorted[Math.floor(sorted.length / 2)] ?? '-'} ms, worst ${sorted.at(-1) ?? '-'} ms`,
  );
  expect(deltas).toBeGreaterThan(10);
  expect(shown).toBeGreaterThan(1_000);
  expect(clicks.length).toBeGreaterThan(2);
  // Loose: a page that froze would miss these by far; a slow shared machine does not.
  expect(Math.max(...clicks)).toBeLessThan(15_000);
  const step = page.getByRole('list', { name: 'Steps' }).getByRole('listitem');
  await expect(step.getByLabel('Message')).toContainText(`word${words}`);
});
