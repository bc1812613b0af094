import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dropDatabase, ensureDatabase, urlForDatabase } from '../db/admin';
import { runMigrations } from '../db/migrate';
import { startTestPostgres } from './embedded-postgres';
import { locate, TEMPORAL_CLI, TEMPORAL_TEST_SERVER } from './temporal-binaries';
import { startTemporalDevServer, type TemporalDevServer } from './temporal-dev-server';
import { testNamespace } from '../test/helpers/namespace';
import { ensureChromium } from './chromium';
import { BROWSER_NAMESPACE } from '../test/browser/stack';
import { ensureConsoleBuilt } from './console-build';
import { TEST_TIERS } from './test-tiers';

/**
 * `npm test`: prepares what every test file shares, then runs node's test runner (each file in its
 * own process).
 * - Postgres: DATABASE_URL (CI: postgres://postgres@127.0.0.1:5432/test), else embedded Postgres.
 *   A template database is migrated once; each test file clones it.
 * - Temporal: a real dev server on a free port, one namespace per test file; the Temporal CLI and the
 *   time-skipping test server are found or fetched (temporal-binaries.ts) before any test starts, so a
 *   missing one is this runner's error, not a test's.
 * - The console's browser tests (test/browser/*.spec.ts, Playwright) run after the node tests, against a
 *   stack of their own on the same Postgres template and dev server; the console is built first when stale.
 * Arguments narrow the run to the given test files (node's .test.ts, Playwright's .spec.ts).
 */

const BROWSER_DIR = 'test/browser';
const PLAYWRIGHT_CONFIG = path.join(BROWSER_DIR, 'playwright.config.ts');

function testFiles(args: string[]): { node: string[]; browser: string[] } {
  if (args.length) return { node: args.filter((f) => !f.endsWith('.spec.ts')), browser: args.filter((f) => f.endsWith('.spec.ts')) };
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return walk(full);
      return name.endsWith('.test.ts') ? [full] : [];
    });
  const node = TEST_TIERS.filter((d) => {
    try {
      return statSync(d).isDirectory();
    } catch {
      return false;
    }
  }).flatMap(walk);
  const browser = readdirSync(BROWSER_DIR).filter((name) => name.endsWith('.spec.ts')).map((name) => path.join(BROWSER_DIR, name));
  return { node, browser };
}

/** Runs a child with the runner's environment and `env`; resolves with its exit code. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise<number>((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function startPostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} };
  // No Postgres given: run an embedded one for this test run only.
  return startTestPostgres();
}

async function main(): Promise<number> {
  const { node: files, browser } = testFiles(process.argv.slice(2));
  const say = (message: string) => console.log(`tests: ${message}`);
  // Found (or fetched) once here; the tests and the dev servers they start use these paths.
  const cli = await locate(TEMPORAL_CLI, say);
  const testServer = await locate(TEMPORAL_TEST_SERVER, say);
  process.env.TEMPORAL_CLI_PATH = cli;
  const postgres = await startPostgres();
  const template = `tpl_${process.pid}`;
  let temporal: TemporalDevServer | undefined;
  try {
    const templateUrl = urlForDatabase(postgres.url, template);
    await dropDatabase(templateUrl); // a leftover of a killed run with the same pid
    await ensureDatabase(templateUrl);
    await runMigrations(templateUrl);

    // One namespace per test file, so workers of files running in parallel never take each other's tasks.
    const namespaces = [...files.map(testNamespace), ...(browser.length ? [BROWSER_NAMESPACE] : [])];
    temporal = await startTemporalDevServer({ extraNamespaces: namespaces, logLevel: 'error', log: say });
    const { address } = temporal;
    say(`Postgres ${postgres.url.replace(/\/\/[^@]*@/, '//')} (template ${template}), Temporal ${address}, CLI ${cli}, test server ${testServer}`);

    const env: NodeJS.ProcessEnv = {
      DATABASE_URL: postgres.url,
      TEST_TEMPLATE_DB: template,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TEST_SERVER_PATH: testServer,
      // The dev server above is plaintext: no Temporal config file (a developer's own
      // ~/.config/temporalio/temporal.toml), profile, TLS or API key of the runner's environment applies.
      ...plaintextTemporalEnv(),
    };
    const nodeCode = files.length
      ? await run(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files], env)
      : 0;
    if (!browser.length) return nodeCode;
    // Chromium is installed when absent (as the docs' browser test does); only where it cannot be are these skipped.
    const unavailable = ensureChromium(say);
    if (unavailable) {
      say(`browser tests skipped: ${unavailable}`);
      return nodeCode;
    }
    await ensureConsoleBuilt(say);
    say(`browser tests: ${browser.join(' ')}`);
    const browserCode = await run(process.execPath, [require.resolve('@playwright/test/cli'), 'test', '--config', PLAYWRIGHT_CONFIG, ...browser.map((f) => path.resolve(f))], env);
    return nodeCode || browserCode;
  } finally {
    await temporal?.stop().catch(() => {});
    await dropDatabase(urlForDatabase(postgres.url, template)).catch(() => {});
    await postgres.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`tests: set-up failed: ${err.stack ?? err.message}${err.cause instanceof Error ? `\n  caused by: ${err.cause.message}` : ''}`);
    process.exit(1);
  },
);

/** TEMPORAL_CONFIG_FILE at a file that does not exist (no profile; envconfig takes that as none), the rest of the connection's settings unset. */
function plaintextTemporalEnv(): NodeJS.ProcessEnv {
  const cleared: NodeJS.ProcessEnv = { TEMPORAL_CONFIG_FILE: path.join(os.tmpdir(), 'agent-platform-tests-no-temporal-config.toml') };
  for (const name of Object.keys(process.env)) {
    if (name === 'TEMPORAL_PROFILE' || name === 'TEMPORAL_API_KEY' || name.startsWith('TEMPORAL_TLS') || name.startsWith('TEMPORAL_GRPC_META_')) cleared[name] = undefined;
  }
  return cleared;
}
