/**
 * `npm run bench` (or `npx tsx bench/run.ts`): the API's overhead over a bare Fastify + pg server.
 *
 *   read:    API `GET /api/agents/:id` (bearer JWT)  vs  bare `GET /agents/:id` (SELECT * … WHERE id = $1)
 *   write:   API `POST /api/agents`     (bearer JWT)  vs  bare `POST /agents` (conditional UPDATE + INSERT, one tx)
 *   metrics: API `GET /api/agents/:id` with metrics on (METRICS_ENABLED=true, the default: every response
 *            counted and timed)  vs  the same API with METRICS_ENABLED=false, a third server process
 *
 * Approach: this process only generates load (autocannon, same connections/duration/warm-up for every
 * target, one target at a time). Each server runs in its own child process (`node --import tsx
 * bench/serve-*.ts`) with its own pg pool of 10, so on a 2-core machine the server under test is not
 * sharing an event loop with the load generator; Postgres, the load generator and that one server
 * share the cores alike for both targets, so the ratio compares like with like. Both servers use the
 * same fresh database `bench_<pid>`, migrated here and dropped at the end.
 *
 * Writes all charge the one bench account, so their throughput is bound by that row's lock (held from
 * the UPDATE to COMMIT) more than by either server's CPU; the server CPU µs/req column shows the
 * per-request overhead there. Both do the insert first, then the conditional charge.
 *
 * Besides req/s and latency it reports the server process's CPU time per request (sampled over IPC),
 * which moves much less than req/s when something else is using the machine.
 *
 * Settings: BENCH_CONNECTIONS (50), BENCH_DURATION seconds (10), BENCH_WARMUP seconds (3),
 * BENCH_ROUNDS (1; with more, api and bare alternate which goes first and the table shows medians),
 * BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432; DATABASE_URL's server if set),
 * BENCH_SCENARIOS (read,write,metrics: which to run), BENCH_CPU_PROF=<dir> (V8 CPU profiles of the servers in
 * <dir>/api and <dir>/bare when they exit; summarize with `npx tsx bench/profile-summary.ts <dir>/api`).
 * Exits 1 if any response is not 2xx or a request errored.
 */
import os from 'node:os';
import { createBenchDatabase } from './database';
import { combine, loadSettingsFromEnv, measure, probe, type Measurement, type Target } from './load';
import { startServer, type ServerProcess } from './server-process';

const RATIO_TARGETS: Record<string, number> = { read: 0.6, metrics: 0.95 };

type Scenario = 'read' | 'write' | 'metrics';
/** The server under test, and the one it is compared with (bare, or the API without metrics). */
type Side = 'api' | 'baseline';

interface Row {
  scenario: Scenario;
  target: string;
  m: Measurement;
}

function table(rows: Row[]): string {
  const header = ['scenario', 'target', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'requests', 'non-2xx', 'errors'];
  const lines = rows.map(({ scenario, target, m }) => [
    scenario,
    target,
    m.requestsPerSecond.toFixed(0),
    m.p50.toFixed(1),
    m.p99.toFixed(1),
    m.cpuPerRequest.toFixed(0),
    String(m.total),
    String(m.non2xx),
    String(m.errors),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

/** POSTs JSON to the API during setup; throws unless it answers `expectStatus`. */
async function postJson<T>(url: string, body: unknown, expectStatus: number, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== expectStatus) throw new Error(`POST ${url} answered ${res.status} (expected ${expectStatus}): ${text}`);
  return JSON.parse(text) as T;
}

async function main(): Promise<number> {
  const settings = loadSettingsFromEnv();
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch((err: unknown) => console.error('cleanup:', err));
  };
  const onSignal = () => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const db = await createBenchDatabase();
    cleanups.push(db.drop);
    const env = { BENCH_DATABASE_URL: db.url };
    const wanted = (process.env.BENCH_SCENARIOS || 'read,write,metrics').split(',').map((w) => w.trim());
    const servers: ServerProcess[] = [];
    cleanups.push(() => Promise.all(servers.map((s) => s.stop())).then(() => {}));
    const [api, bare, unmeasured] = await Promise.all([
      startServer('api', 'serve-api.ts', env),
      startServer('bare', 'serve-bare.ts', env),
      // The same API with METRICS_ENABLED=false (no hook per response, no /metrics), for the metrics scenario.
      wanted.includes('metrics') ? startServer('api, metrics off', 'serve-api.ts', { ...env, BENCH_METRICS_ENABLED: 'false' }) : undefined,
    ]);
    servers.push(api, bare, ...(unmeasured ? [unmeasured] : []));

    // One user, one agent, created over HTTP like any client.
    const session = await postJson<{ accessToken: string }>(
      `${api.baseUrl}/api/auth/register`,
      { email: `bench-${process.pid}@example.com`, password: 'correct horse battery', name: 'Bench' },
      201,
    );
    const authorization = `Bearer ${session.accessToken}`;
    const agent = await postJson<{ id: string; accountId: string }>(`${api.baseUrl}/api/agents`, { name: 'bench agent' }, 201, { authorization });
    const agentId = agent.id;
    const accountId = agent.accountId;

    const apiRead = (server: ServerProcess): Target => ({
      name: `${server.name} read`, url: `${server.baseUrl}/api/agents/${agentId}`, method: 'GET', headers: { authorization }, expectStatus: 200,
    });
    type Plan = { scenario: Scenario; api: Target; baseline: Target; servers: Record<Side, ServerProcess> };
    const allScenarios: Plan[] = [
      {
        scenario: 'read',
        api: apiRead(api),
        baseline: { name: 'bare read', url: `${bare.baseUrl}/agents/${agentId}`, method: 'GET', expectStatus: 200 },
        servers: { api, baseline: bare },
      },
      {
        scenario: 'write',
        api: {
          name: 'api write',
          url: `${api.baseUrl}/api/agents`,
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'bench agent' }),
          expectStatus: 201,
        },
        baseline: {
          name: 'bare write',
          url: `${bare.baseUrl}/agents`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ accountId, name: 'bench agent' }),
          expectStatus: 201,
        },
        servers: { api, baseline: bare },
      },
      ...(unmeasured ? [{ scenario: 'metrics' as const, api: apiRead(api), baseline: apiRead(unmeasured), servers: { api, baseline: unmeasured } }] : []),
    ];
    const scenarios = allScenarios.filter((s) => wanted.includes(s.scenario));
    if (!scenarios.length) throw new Error(`BENCH_SCENARIOS: expected read, write and/or metrics, got "${process.env.BENCH_SCENARIOS}"`);

    const loadavg = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(
      `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}); autocannon in this process, ` +
        `servers in child processes; ${settings.connections} connections, pipelining 1, ` +
        `${settings.warmup} s warm-up + ${settings.duration} s measured per target, one target at a time, ` +
        `${settings.rounds} round(s)`,
    );
    console.log(`load average before: ${loadavg()}`);
    for (const s of scenarios) {
      const [apiBytes, baselineBytes] = [await probe(s.api), await probe(s.baseline)];
      console.log(`${s.scenario}: response body ${apiBytes} B (${s.servers.api.name}) vs ${baselineBytes} B (${s.servers.baseline.name})`);
    }
    console.log('');

    const runs = new Map<string, Measurement[]>();
    for (const s of scenarios) {
      for (let round = 0; round < settings.rounds; round++) {
        for (const side of round % 2 === 0 ? (['api', 'baseline'] as const) : (['baseline', 'api'] as const)) {
          process.stderr.write(`measuring ${s.scenario} ${s.servers[side].name} (round ${round + 1}/${settings.rounds}) …\n`);
          const m = await measure(s[side], settings, s.servers[side].cpuMicros);
          runs.set(`${s.scenario}/${side}`, [...(runs.get(`${s.scenario}/${side}`) ?? []), m]);
        }
      }
    }
    const rows: (Row & { side: Side })[] = scenarios.flatMap((s) =>
      (['api', 'baseline'] as const).map((side) => ({ scenario: s.scenario, side, target: s.servers[side].name, m: combine(runs.get(`${s.scenario}/${side}`)!) })),
    );

    console.log(table(rows));
    console.log(`load average after: ${loadavg()}`);
    console.log('');
    const get = (scenario: Scenario, side: Side) => rows.find((r) => r.scenario === scenario && r.side === side)!.m;
    for (const { scenario, servers: pair } of scenarios) {
      const a = get(scenario, 'api');
      const b = get(scenario, 'baseline');
      const ratio = a.requestsPerSecond / b.requestsPerSecond;
      const target = RATIO_TARGETS[scenario];
      const verdict = target !== undefined ? `  (target ≥ ${target}: ${ratio >= target ? 'met' : 'NOT met'})` : '';
      console.log(
        `${scenario} ratio ${pair.api.name}/${pair.baseline.name}: req/s ${ratio.toFixed(2)}${verdict}; latency p50 ${(a.p50 / b.p50).toFixed(2)}x, ` +
          `p99 ${(a.p99 / b.p99).toFixed(2)}x; server CPU/req ${(a.cpuPerRequest / b.cpuPerRequest).toFixed(2)}x`,
      );
    }

    const bad = rows.filter((r) => r.m.non2xx > 0 || r.m.errors > 0);
    for (const r of bad) {
      console.error(`${r.scenario} ${r.target}: ${r.m.non2xx} non-2xx, ${r.m.errors} errors (${r.m.timeouts} timeouts); status codes ${JSON.stringify(r.m.statusCodes)}`);
    }
    return bad.length ? 1 : 0;
  } finally {
    await cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
