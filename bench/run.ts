/**
 * `npm run bench` (or `npx tsx bench/run.ts`): the API's overhead over a bare Fastify + pg server.
 *
 *   read:   API `GET /api/agents/:id` (bearer JWT)  vs  bare `GET /agents/:id` (SELECT * … WHERE id = $1)
 *   write:  API `POST /api/agents`     (bearer JWT)  vs  bare `POST /agents` (conditional UPDATE + INSERT, one tx)
 *   acting: API `GET /api/agents/:id` by a team member acting in the owner's account (`Account-Id` header: one
 *           membership lookup per request)  vs  the same read by the owner in their own account (target ≥ 0.9)
 *   metrics: API `GET /api/agents/:id` with metrics on (METRICS_ENABLED=true, the default: every response
 *           counted and timed)  vs  the same read on a third server process with METRICS_ENABLED=false
 *           (target ≥ 0.95)
 *   traced-read / traced-write: the API's read and write with tracing on (every request a trace: the request
 *           span and a span per query; exported over OTLP/HTTP to a loopback sink in this process)  vs
 *           the same with tracing off (target ≥ 0.9)
 *   traced-bare / traced-bare-write: the bare Fastify + pg read and write with the same tracing
 *           (bench/serve-bare-traced.ts)  vs  without: what tracing costs the baseline on this machine, printed
 *           beside ours as a req/s ratio and as the server CPU it adds per request
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
 * BENCH_SCENARIOS (read,write,acting,metrics,traced-read,traced-write,traced-bare,traced-bare-write: which to run), BENCH_CPU_PROF=<dir> (V8 CPU profiles of the servers in
 * <dir>/api and <dir>/bare when they exit; summarize with `npx tsx bench/profile-summary.ts <dir>/api`).
 * Exits 1 if any response is not 2xx or a request errored.
 */
import os from 'node:os';
import { startChildServer, type ChildServer } from './kit/child-server';
import { startReceiver } from './kit/receiver';
import { Cleanups, createBenchDatabase } from './kit/stack';
import { combine, loadSettingsFromEnv, measure, probe, type Measurement, type Target } from './load';

const READ_RATIO_TARGET = 0.6;
/** Acting in another account may not cost a read much more than acting in one's own (one membership lookup). */
const ACTING_RATIO_TARGET = 0.9;
/** Measuring every request for GET /metrics may cost a read at most 5 %. */
const METRICS_RATIO_TARGET = 0.95;
/** Tracing every request may cost a read or a write at most 10 %. */
const TRACING_RATIO_TARGET = 0.9;

type Scenario = 'read' | 'write' | 'acting' | 'metrics' | 'traced-read' | 'traced-write' | 'traced-bare' | 'traced-bare-write';

/** Each scenario measures `subject` against `baseline` in the same run; the ratio is subject/baseline. */
interface Pair {
  scenario: Scenario;
  subject: Target;
  baseline: Target;
  /** How the table names the two. */
  labels: [string, string];
  /** The req/s ratio the scenario should reach, when it has one. */
  ratioTarget?: number;
}

interface Row {
  scenario: Scenario;
  target: string;
  m: Measurement;
}

function table(rows: Row[]): string {
  const header = ['scenario', 'target', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'SQL/req', 'requests', 'non-2xx', 'errors'];
  const lines = rows.map(({ scenario, target, m }) => [
    scenario,
    target,
    m.requestsPerSecond.toFixed(0),
    m.p50.toFixed(1),
    m.p99.toFixed(1),
    m.cpuPerRequest.toFixed(0),
    m.statementsPerRequest.toFixed(1),
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
  const cleanups = new Cleanups();
  const cleanup = () => cleanups.run();
  const onSignal = () => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const db = await createBenchDatabase();
    cleanups.push(db.drop);
    const env = { BENCH_DATABASE_URL: db.url };
    const wanted = (process.env.BENCH_SCENARIOS || 'read,write,acting,metrics,traced-read,traced-write,traced-bare,traced-bare-write').split(',').map((w) => w.trim());
    const servers: ChildServer[] = [];
    cleanups.push(() => Promise.all(servers.map((s) => s.stop())).then(() => {}));
    // The tracing scenarios' OTLP endpoint: accepts every export and keeps nothing.
    const tracing = wanted.some((w) => w.startsWith('traced-'));
    const otlpSink = tracing ? await startReceiver() : undefined;
    if (otlpSink) cleanups.push(otlpSink.close);
    const [api, bare, unmeasured, traced, tracedBare] = await Promise.all([
      startChildServer('api', 'serve-api.ts', env),
      startChildServer('bare', 'serve-bare.ts', env),
      // The same API with METRICS_ENABLED=false (no hook per response, no /metrics), for the metrics scenario.
      wanted.includes('metrics') ? startChildServer('api, metrics off', 'serve-api.ts', { ...env, BENCH_METRICS_ENABLED: 'false' }) : undefined,
      // The same API with tracing on, for the tracing scenarios.
      otlpSink ? startChildServer('api, tracing on', 'serve-api-traced.ts', { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlpSink.url }) : undefined,
      // The bare baseline with the same tracing: what tracing costs a bare Fastify + pg read on this machine.
      otlpSink && wanted.some((w) => w.startsWith('traced-bare'))
        ? startChildServer('bare, tracing on', 'serve-bare-traced.ts', { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlpSink.url })
        : undefined,
    ]);
    servers.push(api, bare, ...[unmeasured, traced, tracedBare].filter((s): s is ChildServer => s !== undefined));

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

    // A second user, invited into the first one's account as a viewer (reads are all the bench does), who
    // accepts with the invitation's token and then acts there through Account-Id.
    const memberEmail = `bench-member-${process.pid}@example.com`;
    const member = await postJson<{ accessToken: string }>(
      `${api.baseUrl}/api/auth/register`,
      { email: memberEmail, password: 'correct horse battery', name: 'Bench member' },
      201,
    );
    const invitation = await postJson<{ id: string; inviteToken: string }>(`${api.baseUrl}/api/team`, { email: memberEmail, role: 'viewer' }, 201, { authorization });
    await postJson(`${api.baseUrl}/api/invitations/${invitation.id}/accept`, { token: invitation.inviteToken }, 200, {
      authorization: `Bearer ${member.accessToken}`,
    });
    const ownRead: Target = { name: 'api read', url: `${api.baseUrl}/api/agents/${agentId}`, method: 'GET', headers: { authorization }, expectStatus: 200 };
    const ownWrite: Target = {
      name: 'api write',
      url: `${api.baseUrl}/api/agents`,
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench agent' }),
      expectStatus: 201,
    };
    const bareRead: Target = { name: 'bare read', url: `${bare.baseUrl}/agents/${agentId}`, method: 'GET', expectStatus: 200 };
    const bareWrite: Target = {
      name: 'bare write',
      url: `${bare.baseUrl}/agents`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountId, name: 'bench agent' }),
      expectStatus: 201,
    };
    /** The same target on the server of the same kind with tracing on. */
    const onTraced = (t: Target, from: ChildServer, to: ChildServer): Target => ({ ...t, name: `${t.name}, tracing on`, url: t.url.replace(from.baseUrl, to.baseUrl) });

    const allScenarios: Pair[] = [
      { scenario: 'read', labels: ['api', 'bare'], ratioTarget: READ_RATIO_TARGET, subject: ownRead, baseline: bareRead },
      { scenario: 'write', labels: ['api', 'bare'], subject: ownWrite, baseline: bareWrite },
      {
        scenario: 'acting',
        labels: ['api, Account-Id', 'api, own'],
        ratioTarget: ACTING_RATIO_TARGET,
        subject: {
          name: 'api read acting in another account',
          url: ownRead.url,
          method: 'GET',
          headers: { authorization: `Bearer ${member.accessToken}`, 'account-id': accountId },
          expectStatus: 200,
        },
        baseline: ownRead,
      },
      ...(unmeasured
        ? [
            {
              scenario: 'metrics' as const,
              labels: ['api, metrics on', 'api, metrics off'] as [string, string],
              ratioTarget: METRICS_RATIO_TARGET,
              subject: ownRead,
              baseline: { ...ownRead, name: 'api read, metrics off', url: `${unmeasured.baseUrl}/api/agents/${agentId}` },
            },
          ]
        : []),
      ...(traced
        ? (['read', 'write'] as const).map((kind) => ({
            scenario: `traced-${kind}` as const,
            labels: ['api, tracing on', 'api, tracing off'] as [string, string],
            ratioTarget: TRACING_RATIO_TARGET,
            subject: onTraced(kind === 'read' ? ownRead : ownWrite, api, traced),
            baseline: kind === 'read' ? ownRead : ownWrite,
          }))
        : []),
      ...(tracedBare
        ? (['read', 'write'] as const).map((kind) => ({
            scenario: kind === 'read' ? ('traced-bare' as const) : ('traced-bare-write' as const),
            labels: ['bare, tracing on', 'bare, tracing off'] as [string, string],
            subject: onTraced(kind === 'read' ? bareRead : bareWrite, bare, tracedBare),
            baseline: kind === 'read' ? bareRead : bareWrite,
          }))
        : []),
    ];
    const scenarios = allScenarios.filter((s) => wanted.includes(s.scenario));
    if (!scenarios.length) throw new Error(`BENCH_SCENARIOS: expected some of read, write, acting, metrics, traced-read, traced-write, traced-bare, traced-bare-write, got "${process.env.BENCH_SCENARIOS}"`);

    const loadavg = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(
      `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}); autocannon in this process, ` +
        `servers in child processes; ${settings.connections} connections, pipelining 1, ` +
        `${settings.warmup} s warm-up + ${settings.duration} s measured per target, one target at a time, ` +
        `${settings.rounds} round(s)`,
    );
    console.log(`load average before: ${loadavg()}`);
    for (const s of scenarios) {
      const [subjectBytes, baselineBytes] = [await probe(s.subject), await probe(s.baseline)];
      console.log(`${s.scenario}: response body ${subjectBytes} B (${s.labels[0]}) vs ${baselineBytes} B (${s.labels[1]})`);
    }
    console.log('');

    const runs = new Map<string, Measurement[]>();
    // Which server process answers a target (its CPU clock is sampled around the run).
    const serverOf = (t: Target) => servers.find((server) => t.url.startsWith(`${server.baseUrl}/`))!;
    for (const s of scenarios) {
      for (let round = 0; round < settings.rounds; round++) {
        for (const side of round % 2 === 0 ? (['subject', 'baseline'] as const) : (['baseline', 'subject'] as const)) {
          const label = s.labels[side === 'subject' ? 0 : 1];
          process.stderr.write(`measuring ${s.scenario} ${label} (round ${round + 1}/${settings.rounds}) …\n`);
          const m = await measure(s[side], settings, serverOf(s[side]));
          runs.set(`${s.scenario}/${side}`, [...(runs.get(`${s.scenario}/${side}`) ?? []), m]);
        }
      }
    }
    const rows: Row[] = scenarios.flatMap((s) =>
      (['subject', 'baseline'] as const).map((side, i) => ({ scenario: s.scenario, target: s.labels[i]!, m: combine(runs.get(`${s.scenario}/${side}`)!) })),
    );

    console.log(table(rows));
    console.log(`load average after: ${loadavg()}`);
    console.log('');
    for (const s of scenarios) {
      const a = combine(runs.get(`${s.scenario}/subject`)!);
      const b = combine(runs.get(`${s.scenario}/baseline`)!);
      const ratio = a.requestsPerSecond / b.requestsPerSecond;
      const verdict = s.ratioTarget !== undefined ? `  (target ≥ ${s.ratioTarget}: ${ratio >= s.ratioTarget ? 'met' : 'NOT met'})` : '';
      console.log(
        `${s.scenario} ratio ${s.labels[0]} / ${s.labels[1]}: req/s ${ratio.toFixed(2)}${verdict}; latency p50 ${(a.p50 / b.p50).toFixed(2)}x, ` +
          `p99 ${(a.p99 / b.p99).toFixed(2)}x; server CPU/req ${(a.cpuPerRequest / b.cpuPerRequest).toFixed(2)}x; SQL statements/req ${a.statementsPerRequest.toFixed(1)} vs ${b.statementsPerRequest.toFixed(1)}`,
      );
    }

    // Tracing's cost to our read and write beside its cost to the bare baseline's, measured in the same run: as a
    // req/s ratio, and as the server CPU it adds per request (on − off), which the load generator and Postgres
    // sharing the machine move much less.
    const tracingCost = (scenario: Scenario) => {
      if (!runs.has(`${scenario}/subject`)) return null;
      const [on, off] = [combine(runs.get(`${scenario}/subject`)!), combine(runs.get(`${scenario}/baseline`)!)];
      return `${(on.requestsPerSecond / off.requestsPerSecond).toFixed(2)} (+${Math.round(on.cpuPerRequest - off.cpuPerRequest)} µs CPU/req)`;
    };
    for (const [kind, ours, bares] of [['read', 'traced-read', 'traced-bare'], ['write', 'traced-write', 'traced-bare-write']] as const) {
      const [a, b] = [tracingCost(ours), tracingCost(bares)];
      if (a && b) console.log(`tracing on / off, ${kind}: ours ${a}, bare Fastify + pg ${b}`);
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
