import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { createPool } from '../db/pool';
import { ensureChromium, launchChromium } from '../scripts/chromium';
import { ensureConsoleBuilt, WEB_DIR } from '../scripts/console-build';
import { textReply, toolCallsReply } from './kit/model-server';
import { startReceiver } from './kit/receiver';
import { setting } from './kit/settings';
import { Cleanups, createBenchDatabase, startApiAndWorker, startDevServer } from './kit/stack';

/**
 * `npm run bench:console`: what a person waits for in the console, on this machine (docs/console.md § Figures).
 * 1. The initial JavaScript: the gzip size of the scripts index.html loads before the first screen (its
 *    module script and the chunks it preloads), and the CSS beside it. Target ≤ 250 KB.
 * 2. Navigation → the agents list visible, in headless Chromium, with BENCH_CONSOLE_AGENTS (10,000) agents
 *    in the account: a full page load each time (the cookie refresh, the accounts, the first page of
 *    agents), BENCH_CONSOLE_LOADS (15) times; the median. Target ≤ 1.5 s p50.
 * 3. A run's step committed → the step visible on the run page (SSE): each step's finishedAt (written in the
 *    transaction that records it) against the moment its list item appeared in the page (a MutationObserver,
 *    the same machine's clock), over BENCH_CONSOLE_RUNS (20) runs of three steps. Target p95 ≤ 300 ms.
 * It starts its own stack: a fresh database, a Temporal dev server, the API (serving the built console) and
 * the worker as processes, the scripted model server and a loopback tool endpoint.
 */

const AGENTS = setting('BENCH_CONSOLE_AGENTS', 10_000);
const LOADS = setting('BENCH_CONSOLE_LOADS', 15);
const RUNS = setting('BENCH_CONSOLE_RUNS', 20);
const MODEL = 'bench-console';
const PASSWORD = 'bench console password';

/** A response's JSON body, as the caller expects it to be. */
const body = async <T>(res: Promise<Response>): Promise<T> => (await (await res).json()) as T;

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
};

/** The files index.html makes the browser load before the first screen, by kind, with their gzip sizes. */
function initialAssets(): { js: number; css: number; files: string[] } {
  const dist = path.join(WEB_DIR, 'dist');
  const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
  const refs = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="(?:modulepreload|stylesheet)"[^>]*\shref)="([^"]+)"/g)].map((m) => m[1]!);
  let js = 0;
  let css = 0;
  for (const ref of refs) {
    const size = gzipSync(fs.readFileSync(path.join(dist, ref))).length;
    if (ref.endsWith('.js')) js += size;
    else if (ref.endsWith('.css')) css += size;
  }
  return { js, css, files: refs };
}

async function main(): Promise<void> {
  const say = (line: string) => console.log(`bench:console: ${line}`);
  await ensureConsoleBuilt(say);
  const assets = initialAssets();

  const unavailable = ensureChromium(say);
  if (unavailable) throw new Error(`no browser: ${unavailable}`);
  const cleanups = new Cleanups();
  const database = await createBenchDatabase();
  cleanups.push(() => database.drop());
  const temporal = await startDevServer();
  cleanups.push(() => temporal.stop());
  // Each answer takes 300 ms, like a quick model: a tool call first, then the answer once the tool said something.
  const models = await startReceiver((req) => {
    const request = JSON.parse(req.body) as { messages: Array<{ role: string }> };
    return { body: request.messages.at(-1)?.role === 'tool' ? textReply('done') : toolCallsReply([{ name: 'probe', arguments: {} }]), delayMs: 300 };
  });
  cleanups.push(() => models.close());
  const receiver = await startReceiver(() => ({ body: { price: 42 } }));
  cleanups.push(() => receiver.close());
  const stack = await startApiAndWorker(database.url, temporal.address, {
    MODEL_BASE_URL: `${models.url}/v1`,
    MODEL_NAME: MODEL,
    AUTH_RATE_LIMIT_MAX: '100000',
    INITIAL_BALANCE: '1000000',
  });
  cleanups.push(() => stack.stop());
  const base = stack.base;
  const db = createPool(database.url, 2);
  cleanups.push(() => db.end());
  const browser = await launchChromium();
  cleanups.push(() => browser.close());
  try {
    const email = `bench-console-${Date.now()}@example.com`;
    const session = await body<{ accessToken: string }>(fetch(`${base}/api/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) }));
    const auth = { authorization: `Bearer ${session.accessToken}`, 'content-type': 'application/json' };
    const account = await body<{ id: string }>(fetch(`${base}/api/account`, { headers: auth }));

    // 10,000 agents in the account, written at once (the list reads them as the API wrote any other).
    const seeded = Date.now();
    await db.query(
      `INSERT INTO agents (account_id, name, description, memory_config, created_at, updated_at)
       SELECT $1, 'Agent ' || n, 'Seeded for the bench', '{"type": "conversation", "maxMessages": 50, "ttlMinutes": 1440}',
              now() - n * interval '1 second', now() - n * interval '1 second'
       FROM generate_series(1, $2) AS n`,
      [account.id, AGENTS],
    );
    say(`seeded ${AGENTS} agents in ${Date.now() - seeded} ms`);

    const page: Page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.goto(`${base}/signin`);
    await page.getByRole('textbox', { name: 'Email' }).fill(email);
    await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const agentsTable = page.getByRole('table', { name: 'Agents' }).getByRole('link').first();
    await agentsTable.waitFor();

    // 2. Navigation → agents list visible.
    const listUrl = `${base}/w/${account.id}/agents`;
    const loads: number[] = [];
    await page.goto(listUrl); // warm: the files in the browser's cache, as for a returning person
    await agentsTable.waitFor();
    for (let i = 0; i < LOADS; i++) {
      const started = Date.now();
      await page.goto(listUrl);
      await agentsTable.waitFor({ timeout: 30_000 });
      loads.push(Date.now() - started);
    }

    // 3. Step committed → step visible, over SSE.
    const agent = await body<{ id: string }>(fetch(`${base}/api/agents`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Bench runner', status: 'active' }) }));
    await fetch(`${base}/api/agents/${agent.id}/tools`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ type: 'custom', name: 'probe', configJson: { endpoint: `${receiver.url}/probe`, method: 'GET' } }),
    });
    const lags: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const run = await body<{ id: string }>(fetch(`${base}/api/agents/${agent.id}/runs`, { method: 'POST', headers: auth, body: JSON.stringify({ input: `run ${i}` }) }));
      await page.goto(`${base}/w/${account.id}/runs/${run.id}`);
      // Records when each step's list item first appears, by the page's clock (the machine's).
      // As text: a function would be sent with the helpers tsx adds to it (__name), which the page has not.
      await page.evaluate(`(() => {
        window.__seen = {};
        const look = () => {
          for (const item of document.querySelectorAll('li[aria-label^="Step "]')) window.__seen[item.getAttribute('aria-label')] ??= Date.now();
        };
        look();
        new MutationObserver(look).observe(document.body, { childList: true, subtree: true });
      })()`);
      await page.getByText('succeeded').first().waitFor({ timeout: 60_000 });
      const seen = (await page.evaluate('window.__seen')) as Record<string, number>;
      const steps = await body<Array<{ index: number; type: string; name: string; finishedAt: string }>>(fetch(`${base}/api/runs/${run.id}/steps`, { headers: auth }));
      for (const step of steps) {
        const label = `Step ${step.index + 1}: ${step.type} ${step.name}`;
        // A step already committed when the page opened is a replay, not a live delivery: left out.
        if (seen[label] !== undefined) lags.push(seen[label]! - new Date(step.finishedAt).getTime());
      }
    }
    const live = lags.filter((lag) => lag >= 0);

    const lines = [
      '',
      `console (npm run bench:console) on ${new Date().toISOString().slice(0, 10)}, ${process.arch}, ${(await import('node:os')).cpus().length} cores:`,
      `  initial JavaScript (gzip)            ${kb(assets.js)}  (target ≤ 250 KB; CSS ${kb(assets.css)}; ${assets.files.join(', ')})`,
      `  navigation → agents list visible     p50 ${quantile(loads, 0.5)} ms, p95 ${quantile(loads, 0.95)} ms, max ${Math.max(...loads)} ms over ${loads.length} loads with ${AGENTS} agents (target p50 ≤ 1500 ms)`,
      `  step committed → visible (SSE)       p50 ${quantile(live, 0.5)} ms, p95 ${quantile(live, 0.95)} ms, max ${Math.max(...live)} ms over ${live.length} steps of ${RUNS} runs (target p95 ≤ 300 ms)`,
      '',
    ];
    console.log(lines.join('\n'));
  } finally {
    await cleanups.run();
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(`bench:console failed: ${err.stack ?? err.message}`);
    process.exit(1);
  },
);
