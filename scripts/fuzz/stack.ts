import crypto from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { dropDatabase, ensureDatabase, urlForDatabase } from '../../db/admin';
import { runMigrations } from '../../db/migrate';
import { startTestPostgres } from '../embedded-postgres';
import { findFreePort, superviseNode } from '../processes';
import { startTemporalDevServer } from '../temporal-dev-server';

/**
 * The stack `npm run fuzz` tests when it is given no URL: the API and the worker (supervised like `npm
 * start`'s, scripts/processes.ts) on a database of their own and a Temporal dev server of their own, so a fuzz
 * run neither needs nor touches `npm start`'s data and ports.
 * - Postgres: a fresh database `fuzz_<pid>` on DATABASE_URL's server, dropped afterwards; without DATABASE_URL
 *   a throw-away embedded Postgres (the test runner's), removed afterwards.
 * - Temporal: TEMPORAL_ADDRESS, else a dev server in memory on a free port.
 * - The limits a fuzzer would only ever meet as 429, 402 or 403 are raised (FUZZ_LIMITS).
 */

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Thousands of generated requests from one address and one account would otherwise spend every budget in the
 * first minute, and the rest of the run would test the 429/402/403 answers instead of the operations. Each limit
 * keeps its own tests (test/api/rate-limit, login-limit, quotas, hooks…); here it only has to stay out of the way.
 */
export const FUZZ_LIMITS: Record<string, string> = {
  AUTH_RATE_LIMIT_MAX: '1000000',
  INITIAL_BALANCE: '1000000000',
  QUOTA_TRIGGERS: '100000',
  QUOTA_WEBHOOKS: '100000',
  QUOTA_TOOLS_PER_AGENT: '100000',
  QUOTA_CONNECTORS_PER_AGENT: '100000',
  HOOK_RATE_LIMIT: '1000000',
  FIRES_PER_MINUTE: '1000000',
  DELIVERY_RETRIES_PER_MINUTE: '100000',
  RECOVER_INTERVAL: '1ms',
  RUN_STREAMS_PER_USER: '1000',
};

/**
 * What the worker does with the fuzzer's writes stays on this machine and short: the data tools point at a closed
 * local port (no public API is called), a delivery gets one attempt, and a call gives up after 2 s.
 * ALLOW_PRIVATE_TARGETS is true, as under `npm start` and in the tests: with it false, the target check resolves
 * every webhook and tool host, and a generated host never resolves, so each valid create would answer 400 and
 * nothing behind it would be reached (the check has tests of its own, test/api/webhooks and tools).
 */
export const FUZZ_ENGINE: Record<string, string> = {
  ALLOW_PRIVATE_TARGETS: 'true',
  COINGECKO_BASE_URL: 'http://127.0.0.1:9',
  DEXSCREENER_BASE_URL: 'http://127.0.0.1:9',
  POLYMARKET_BASE_URL: 'http://127.0.0.1:9',
  WEBHOOK_RETRY_SCHEDULE: '0s',
  WEBHOOK_TIMEOUT_MS: '2000',
  TOOL_TIMEOUT_MS: '2000',
  // Requests are not logged one by one (thousands), nor the hand-off's retries while Temporal is busy; errors
  // (a 500's stack) are.
  LOG_LEVEL: 'error',
};

export interface FuzzStack {
  baseUrl: string;
  /** Stops what was started, in reverse order; safe to call more than once. */
  stop(): Promise<void>;
}

export interface FuzzStackOptions {
  log: (message: string) => void;
  signal: AbortSignal;
  /** The API or the worker exited during start-up: the stack cannot start. */
  onStartupExit: (message: string) => void;
  /** The API or the worker exited while the fuzzer ran (it is restarted): a finding. */
  onCrash: (message: string) => void;
}

export async function startFuzzStack(options: FuzzStackOptions): Promise<FuzzStack> {
  const { log, signal } = options;
  const resources: Array<{ name: string; stop: () => Promise<void> }> = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const resource of resources.reverse()) {
      log(`stopping ${resource.name}`);
      await resource.stop().catch((err: Error) => log(`stopping ${resource.name} failed: ${err.message}`));
    }
  };
  const checkpoint = () => {
    if (signal.aborted) throw new Error('interrupted');
  };

  try {
    let databaseUrl: string;
    if (process.env.DATABASE_URL) {
      databaseUrl = urlForDatabase(process.env.DATABASE_URL, `fuzz_${process.pid}`);
      log(`creating database fuzz_${process.pid} on DATABASE_URL's server (dropped afterwards)`);
      await dropDatabase(databaseUrl); // a leftover of a killed run with the same pid
      await ensureDatabase(databaseUrl);
      resources.push({ name: `database fuzz_${process.pid}`, stop: () => dropDatabase(databaseUrl) });
    } else {
      log('starting a throw-away embedded Postgres');
      const postgres = await startTestPostgres();
      resources.push({ name: 'postgres', stop: postgres.stop });
      databaseUrl = postgres.url;
    }
    checkpoint();
    log('applying database migrations');
    await runMigrations(databaseUrl);
    checkpoint();

    let temporalAddress = process.env.TEMPORAL_ADDRESS || undefined;
    if (!temporalAddress) {
      log('starting a Temporal dev server (in memory, on a free port)');
      // Its output is off: under the fuzzer's load on a small machine it logs every slow persistence call.
      const temporal = await startTemporalDevServer({ onLine: () => {}, log });
      resources.push({ name: 'temporal', stop: temporal.stop });
      temporalAddress = temporal.address;
    }
    checkpoint();

    const port = await findFreePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      // A throw-away database needs throw-away keys.
      JWT_SECRET: crypto.randomBytes(48).toString('base64url'),
      SECRETS_KEY: crypto.randomBytes(32).toString('base64'),
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      ...FUZZ_LIMITS,
      ...FUZZ_ENGINE,
    };
    log(`starting the worker and the API on ${baseUrl}`);
    const children = (
      [
        ['worker', 'worker/main.ts', 33],
        ['api', 'api/server.ts', 32],
      ] as const
    ).map(([name, entry, color]) => {
      const child = superviseNode({ name, entry, color, cwd: ROOT, env, log, onStartupExit: options.onStartupExit, onCrash: options.onCrash });
      resources.push({ name, stop: child.stop });
      return child;
    });
    for (const deadline = Date.now() + 120_000; ; await sleep(250)) {
      checkpoint();
      const res = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.any([signal, AbortSignal.timeout(2_000)]) }).catch(() => undefined);
      if (res?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`The API did not answer 200 on ${baseUrl}/api/health within 120 s.`);
    }
    for (const child of children) child.markStarted();
    return { baseUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
