import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { suiteContext } from '../helpers/cleanup';
import { DESCRIBE_DEADLINE_MS } from '../../engine/temporal/pollers';
import { startTestApp } from '../helpers/app';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { freePort, waitFor } from '../helpers/processes';
import { TEST_METRICS_SNAPSHOT_MS } from '../helpers/prometheus';

const ROOT = path.join(__dirname, '../..');
const DASHBOARD = 'ops/grafana/agent-platform.json';
const ALERTS = 'ops/prometheus/alerts.yml';

interface Expression {
  where: string;
  expr: string;
}

function dashboardExpressions(): Expression[] {
  const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, DASHBOARD), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
  return dashboard.panels.flatMap((p) => p.targets.map((target) => ({ where: `${DASHBOARD} "${p.title}"`, expr: target.expr })));
}

function alertExpressions(): Expression[] {
  const rules = parse(fs.readFileSync(path.join(ROOT, ALERTS), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `${ALERTS} ${r.alert}`, expr: r.expr })));
}

/** Our metric names in a PromQL expression, with each selector's `label="value"` matchers. */
function selectors(expr: string): { metric: string; matchers: [string, string][] }[] {
  return [...expr.matchAll(/\b(agent_platform_[a-z0-9_]+)\b(\{([^}]*)\})?/g)].map((m) => ({
    metric: m[1]!,
    matchers: [...(m[3] ?? '').matchAll(/([a-z_]+)\s*=\s*"([^"]*)"/g)].map((l) => [l[1]!, l[2]!] as [string, string]),
  }));
}

/** The samples of a text exposition: name and labels of each line that is not a comment. */
function samples(text: string): { name: string; labels: Record<string, string> }[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? /.exec(line);
      assert.ok(m, `a sample line: ${line}`);
      return { name: m[1]!, labels: Object.fromEntries([...(m[3] ?? '').matchAll(/([a-zA-Z_]+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!])) };
    });
}

/** The operators' kit (docs/operations.md § The operators' kit): every metric its dashboard and alerts name is served. */
describe('the Grafana dashboard and the Prometheus alert rules', () => {
  const suite = suiteContext();
  let h: EngineHarness;

  before(async () => {
    h = await startEngine(suite, __filename, { METRICS_SNAPSHOT_MS: String(TEST_METRICS_SNAPSHOT_MS) });
  });

  it('holds the panels and rules the operations guide names', () => {
    const titles = dashboardExpressions().map((e) => e.where);
    for (const panel of ['Requests by status', 'Schedule fires: expected vs actual', 'Deliveries by outcome', 'Run latency', 'Outbox depth', 'Workers polling']) {
      assert.ok(titles.some((t) => t.endsWith(`"${panel}"`)), panel);
    }
    const alerts = alertExpressions().map((e) => e.where.split(' ')[1]);
    for (const alert of ['AgentPlatformFiresMissed', 'AgentPlatformOutboxGrowing', 'AgentPlatformWebhooksFailing', 'AgentPlatformWorkerNotPolling']) assert.ok(alerts.includes(alert), alert);
  });

  it('finds every metric they name, with every label value they select, in a real /metrics scrape', async () => {
    // A request first: the request series exist once a request was answered.
    assert.equal((await h.app.inject({ method: 'GET', url: '/api/health' })).statusCode, 200);
    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    const scraped = samples(res.body);
    const expressions = [...dashboardExpressions(), ...alertExpressions()];
    assert.ok(expressions.length >= 20);
    for (const { where, expr } of expressions) {
      const named = selectors(expr);
      assert.ok(named.length > 0, `${where} names no metric of ours: ${expr}`);
      for (const { metric, matchers } of named) {
        const series = scraped.filter((s) => s.name === metric);
        assert.ok(series.length > 0, `${where}: ${metric} is not in /metrics`);
        for (const [label, value] of matchers) assert.ok(series.some((s) => s.labels[label] === value), `${where}: no ${metric} with ${label}="${value}" in /metrics`);
      }
    }
  });

  it('counts the worker processes polling each task queue, from Temporal', async () => {
    const pollers = async () => {
      await new Promise((r) => setTimeout(r, TEST_METRICS_SNAPSHOT_MS + 20));
      const res = await h.app.inject({ method: 'GET', url: '/metrics' });
      return samples(res.body).filter((s) => s.name === 'agent_platform_task_queue_pollers');
    };
    const polling = await waitFor('the worker to be seen polling', async () => {
      const series = await pollers();
      return series.length === 3 && series;
    }, 30_000);
    assert.deepEqual(
      polling.map((s) => `${s.labels.task_queue} ${s.labels.type}`).sort(),
      ['agent-platform activity', 'agent-platform workflow', 'agent-platform-deliveries activity'],
    );
    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    const values = res.body.split('\n').filter((l) => l.startsWith('agent_platform_task_queue_pollers{'));
    assert.ok(values.every((l) => Number(l.split(' ').pop()) === 1), values.join('\n'));
  });
});

describe('the pollers gauge when Temporal does not answer', () => {
  it('reads 0 for every task queue (so AgentPlatformWorkerNotPolling fires), and the scrape does not wait on Temporal', async (t) => {
    const { app } = await startTestApp(t, { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`, METRICS_SNAPSHOT_MS: String(TEST_METRICS_SNAPSHOT_MS) });
    const started = Date.now();
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.ok(Date.now() - started < 5_000, `the scrape took ${Date.now() - started} ms`);
    const lines = res.body.split('\n').filter((l) => l.startsWith('agent_platform_task_queue_pollers{'));
    assert.equal(lines.length, 3, res.body);
    assert.ok(lines.every((l) => l.endsWith(' 0')), lines.join('\n'));
    // The SDK retries the unanswered call on timers until its deadline; the connection closes after that.
    await new Promise((r) => setTimeout(r, DESCRIBE_DEADLINE_MS + 1_000));
  });
});
