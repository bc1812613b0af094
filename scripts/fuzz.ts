import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { schemathesisConfig } from './fuzz/config';
import { summarize } from './fuzz/report';
import { ensureSchemathesis, SCHEMATHESIS_VERSION } from './fuzz/schemathesis';
import { seed } from './fuzz/seed';
import { FUZZ_LIMITS, startFuzzStack, type FuzzStack } from './fuzz/stack';
import { prefixedPrinter, runInOwnProcessGroup } from './processes';

/**
 * `npm run fuzz`: an independent fuzzer against the API's own OpenAPI document. Schemathesis (pinned, installed
 * into `.data/fuzz-venv`) runs every phase (examples, coverage, fuzzing, stateful) with every check, in positive
 * and negative mode, signed in as a seeded user with resources of every kind. It tests a stack of its own
 * (fuzz/stack.ts) or, with `--url`, one already running. Exits non-zero on any failed check (a 5xx, a response
 * or status the document does not promise, …) or a crash of the API or the worker.
 *
 *   npm run fuzz                                  # own stack: Postgres (DATABASE_URL or embedded), Temporal, worker, API
 *   npm run fuzz -- --url http://127.0.0.1:3000   # a running stack (its limits apply: see the README)
 *   npm run fuzz -- --max-examples 100 --seed 3   # longer (default 30 per operation and mode), reproducible
 *   npm run fuzz -- --workers 4                   # schemathesis' concurrent workers (default 2)
 */

const ROOT = path.resolve(__dirname, '..');
const OUT_DIR = path.join(ROOT, '.data', 'fuzz');

const say = prefixedPrinter('fuzz', 35);
const log = (message: string) => say(message, 'stdout');
const logError = (message: string) => say(message, 'stderr');

function options() {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      'max-examples': { type: 'string', default: '30' },
      workers: { type: 'string', default: '2' },
      seed: { type: 'string' },
    },
  });
  const positive = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value) || Number(value) < 1) throw new Error(`--${name} must be a positive integer (not ${value})`);
    return Number(value);
  };
  // Schemathesis' seeds are 128-bit integers (it prints the one it picked): kept as digits, as a Number would round them.
  const seed = values.seed;
  if (seed !== undefined && !/^\d{1,39}$/.test(seed)) throw new Error(`--seed must be a non-negative integer (not ${seed})`);
  return {
    url: values.url?.replace(/\/+$/, ''),
    maxExamples: positive('max-examples', values['max-examples'])!,
    workers: positive('workers', values.workers)!,
    seed,
  };
}

async function main(): Promise<number> {
  const opts = options();
  const controller = new AbortController();
  const crashes: string[] = [];
  let startupFailure: string | undefined;
  await runInOwnProcessGroup(() => controller.abort());
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      log(`${sig} received; stopping`);
      controller.abort();
    });
  }

  const st = await ensureSchemathesis(log);
  let stack: FuzzStack | undefined;
  try {
    if (opts.url) {
      log(`fuzzing the stack at ${opts.url}; its own limits apply (README: Fuzzing lists the ones to raise: ${Object.keys(FUZZ_LIMITS).join(', ')})`);
    } else {
      stack = await startFuzzStack({
        log,
        signal: controller.signal,
        onStartupExit: (message) => {
          startupFailure = message;
          controller.abort();
        },
        onCrash: (message) => {
          crashes.push(message);
          logError(`${message} while the fuzzer ran: a finding`);
        },
      });
    }
    const baseUrl = opts.url ?? stack!.baseUrl;
    const seeded = await seed(baseUrl, log);

    fs.rmSync(OUT_DIR, { recursive: true, force: true });
    fs.mkdirSync(OUT_DIR, { recursive: true });
    const spec = (await (await fetch(`${baseUrl}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
    const configFile = path.join(OUT_DIR, 'schemathesis.toml');
    fs.writeFileSync(configFile, schemathesisConfig(seeded, Object.keys(spec.paths)), { mode: 0o600 });
    const acceptedFile = path.join(OUT_DIR, 'accepted.json');
    const reportDir = path.join(OUT_DIR, 'report');
    const args = [
      '--config-file', configFile,
      'run', `${baseUrl}/api/openapi.json`,
      '--checks', 'all',
      '--mode', 'all',
      '--max-examples', String(opts.maxExamples),
      '--workers', String(opts.workers),
      '--continue-on-failure',
      '--report', 'json,ndjson',
      '--report-dir', reportDir,
      ...(opts.seed !== undefined ? ['--seed', opts.seed] : []),
    ];
    log(`schemathesis ${SCHEMATHESIS_VERSION}: st ${args.join(' ')}`);
    const { execa } = await import('execa');
    const result = await execa(st, args, {
      stdio: 'inherit',
      reject: false,
      cancelSignal: controller.signal,
      cwd: OUT_DIR,
      env: { FUZZ_ACCEPTED_FILE: acceptedFile },
    });
    if (controller.signal.aborted) throw new Error(startupFailure ?? 'interrupted');

    const summary = summarize(reportDir, acceptedFile);
    const accepted = Object.entries(summary.accepted);
    const lines = [
      '',
      `Fuzzing summary (schemathesis ${SCHEMATHESIS_VERSION}, every check, positive and negative mode):`,
      `  requests          ${summary.requests}`,
      `  test cases        ${summary.testCases}`,
      `  operations        ${summary.operations}`,
      `  statuses          ${Object.entries(summary.statuses).map(([status, n]) => `${status}×${n}`).join(' ')}`,
      `  checks            ${Object.keys(summary.checks).length}: ${Object.entries(summary.checks).map(([name, n]) => `${name}×${n}`).join(' ')}`,
      `  failures          ${summary.failures.length === 0 ? 'none' : summary.failures.map((f) => `${f.code} ${f.title} (${f.count}: ${f.operations.join(', ')})`).join('; ')}`,
      `  accepted          ${accepted.length === 0 ? 'none' : accepted.map(([rule, n]) => `${rule}×${n}`).join(' ')} (contract decisions: scripts/fuzz/hooks.py)`,
      `  5xx responses     ${summary.serverErrors}`,
      `  process crashes   ${crashes.length === 0 ? 'none' : crashes.join('; ')}`,
      `  report            ${path.relative(process.cwd(), reportDir)}`,
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');
    const clean = result.exitCode === 0 && summary.failures.length === 0 && summary.serverErrors === 0 && crashes.length === 0;
    return clean ? 0 : 1;
  } catch (err) {
    logError(startupFailure ?? (err as Error).stack ?? String(err));
    return 1;
  } finally {
    await stack?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    logError((err as Error).stack ?? String(err));
    process.exit(1);
  },
);
