import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { dropDatabase, ensureDatabase, urlForDatabase } from '../db/admin';
import { runMigrations } from '../db/migrate';
import { startTestPostgres } from './embedded-postgres';
import { locate, TEMPORAL_CLI, TEMPORAL_TEST_SERVER } from './temporal-binaries';
import { startTemporalDevServer, type TemporalDevServer } from './temporal-dev-server';
import { testNamespace } from '../test/helpers/namespace';

/**
 * `npm test`: prepares what every test file shares, then runs node's test runner (each file in its
 * own process).
 * - Postgres: DATABASE_URL (CI: postgres://postgres@127.0.0.1:5432/test), else embedded Postgres.
 *   A template database is migrated once; each test file clones it.
 * - Temporal: a real dev server on a free port, one namespace per test file; the Temporal CLI and the
 *   time-skipping test server are found or fetched (temporal-binaries.ts) before any test starts, so a
 *   missing one is this runner's error, not a test's.
 * Arguments narrow the run to the given test files.
 */

function testFiles(args: string[]): string[] {
  if (args.length) return args;
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return walk(full);
      return name.endsWith('.test.ts') ? [full] : [];
    });
  return ['test/unit', 'test/api', 'test/workflows', 'test/engine', 'test/e2e'].filter((d) => {
    try {
      return statSync(d).isDirectory();
    } catch {
      return false;
    }
  }).flatMap(walk);
}

async function startPostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} };
  // No Postgres given: run an embedded one for this test run only.
  return startTestPostgres();
}

async function main(): Promise<number> {
  const files = testFiles(process.argv.slice(2));
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
    temporal = await startTemporalDevServer({ extraNamespaces: files.map(testNamespace), logLevel: 'error', log: say });
    const { address } = temporal;
    say(`Postgres ${postgres.url.replace(/\/\/[^@]*@/, '//')} (template ${template}), Temporal ${address}, CLI ${cli}, test server ${testServer}`);

    return await new Promise<number>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
        {
          stdio: 'inherit',
          env: {
            ...process.env,
            DATABASE_URL: postgres.url,
            TEST_TEMPLATE_DB: template,
            TEMPORAL_ADDRESS: address,
            TEMPORAL_TEST_SERVER_PATH: testServer,
          },
        },
      );
      child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
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
