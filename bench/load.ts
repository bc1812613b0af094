import autocannon from 'autocannon';
import { setting } from './kit/settings';
import { median } from './kit/stats';

export interface LoadSettings {
  connections: number;
  /** Measured run, seconds. */
  duration: number;
  /** Unmeasured run just before each measured one, seconds (JIT, pool connections, caches). */
  warmup: number;
  /** Measured runs per target; targets alternate order each round, and the table shows the median. */
  rounds: number;
}

export interface Target {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** The status every response should have. */
  expectStatus: number;
}

export interface Measurement {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Server-process CPU time per request, microseconds: less sensitive to a busy machine than req/s. */
  cpuPerRequest: number;
  /** SQL statements (round trips to Postgres) the server sent per request. */
  statementsPerRequest: number;
}

export function loadSettingsFromEnv(): LoadSettings {
  return {
    connections: setting('BENCH_CONNECTIONS', 50),
    duration: setting('BENCH_DURATION', 10),
    warmup: setting('BENCH_WARMUP', 3),
    rounds: Math.max(1, setting('BENCH_ROUNDS', 1)),
  };
}

function run(target: Target, connections: number, duration: number) {
  return autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    body: target.body,
    connections,
    duration,
    pipelining: 1,
  });
}

/** One request outside the load run: checks the status before we measure anything, returns the body size. */
export async function probe(target: Target): Promise<number> {
  const res = await fetch(target.url, { method: target.method, headers: target.headers, body: target.body });
  const text = await res.text();
  if (res.status !== target.expectStatus) {
    throw new Error(`${target.name}: ${target.method} ${target.url} answered ${res.status} (expected ${target.expectStatus}): ${text}`);
  }
  return Buffer.byteLength(text);
}

/**
 * Warm-up, then the measured run, with the same settings for every target. `server` reads the server
 * process's CPU clock and its count of SQL statements, sampled around the measured run.
 */
export async function measure(target: Target, settings: LoadSettings, server: { cpuMicros: () => Promise<number>; statements: () => Promise<number> }): Promise<Measurement> {
  if (settings.warmup > 0) await run(target, settings.connections, settings.warmup);
  const [cpuBefore, statementsBefore] = [await server.cpuMicros(), await server.statements()];
  const r = await run(target, settings.connections, settings.duration);
  const [cpuAfter, statementsAfter] = [await server.cpuMicros(), await server.statements()];
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  return {
    requestsPerSecond: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
    cpuPerRequest: r.requests.total ? (cpuAfter - cpuBefore) / r.requests.total : 0,
    statementsPerRequest: r.requests.total ? (statementsAfter - statementsBefore) / r.requests.total : 0,
  };
}

/** Several rounds of one target: medians of the rates and latencies, sums of the counts. */
export function combine(runs: Measurement[]): Measurement {
  const statusCodes: Record<string, number> = {};
  for (const m of runs) for (const [code, n] of Object.entries(m.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const sum = (f: (m: Measurement) => number) => runs.reduce((acc, m) => acc + f(m), 0);
  return {
    requestsPerSecond: median(runs.map((m) => m.requestsPerSecond)),
    p50: median(runs.map((m) => m.p50)),
    p99: median(runs.map((m) => m.p99)),
    cpuPerRequest: median(runs.map((m) => m.cpuPerRequest)),
    statementsPerRequest: median(runs.map((m) => m.statementsPerRequest)),
    total: sum((m) => m.total),
    non2xx: sum((m) => m.non2xx),
    errors: sum((m) => m.errors),
    timeouts: sum((m) => m.timeouts),
    statusCodes,
  };
}
