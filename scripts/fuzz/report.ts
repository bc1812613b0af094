import fs from 'node:fs';
import path from 'node:path';

/** What a fuzz run did, from schemathesis' own reports (its JSON run report and its NDJSON event stream). */

export interface FuzzSummary {
  /** HTTP requests sent (every recorded interaction, checks' own requests included). */
  requests: number;
  testCases: number;
  operations: number;
  /** Responses by status code. */
  statuses: Record<string, number>;
  /** Each check that ran, with how many responses it judged. */
  checks: Record<string, number>;
  serverErrors: number;
  /** Each group of failures schemathesis reported, by kind. */
  failures: Array<{ code: string; title: string; count: number; operations: string[] }>;
  /** Failures dropped by a rule of hooks.py (a contract decision), by rule. */
  accepted: Record<string, number>;
}

interface Interaction {
  response?: { status_code: number } | null;
}
interface ScenarioFinished {
  recorder: { interactions?: Record<string, Interaction>; checks?: Record<string, Array<{ name: string }>> };
}

export function summarize(reportDir: string, acceptedFile: string): FuzzSummary {
  const files = fs.readdirSync(reportDir);
  const find = (prefix: string) => {
    const name = files.find((f) => f.startsWith(prefix));
    if (!name) throw new Error(`schemathesis wrote no ${prefix} report in ${reportDir}`);
    return path.join(reportDir, name);
  };
  const run = JSON.parse(fs.readFileSync(find('json-'), 'utf8')) as {
    test_cases: { generated: number };
    operations: { tested: number } | null;
    failures: Array<{ code: string; title: string; count: number; operations: string[] }>;
  };

  let requests = 0;
  const statuses: Record<string, number> = {};
  const checks: Record<string, number> = {};
  for (const line of fs.readFileSync(find('ndjson-'), 'utf8').split('\n')) {
    if (!line.startsWith('{"ScenarioFinished"')) continue;
    const event = (JSON.parse(line) as { ScenarioFinished: ScenarioFinished }).ScenarioFinished;
    for (const interaction of Object.values(event.recorder.interactions ?? {})) {
      requests++;
      const status = interaction.response ? String(interaction.response.status_code) : 'no response';
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
    for (const results of Object.values(event.recorder.checks ?? {})) {
      for (const { name } of results) checks[name] = (checks[name] ?? 0) + 1;
    }
  }
  const accepted = fs.existsSync(acceptedFile) ? (JSON.parse(fs.readFileSync(acceptedFile, 'utf8')) as Record<string, number>) : {};
  return {
    requests,
    testCases: run.test_cases.generated,
    operations: run.operations?.tested ?? 0,
    statuses,
    checks,
    // A 502 about an MCP server the stack cannot reach is the API's answer about a third party (hooks.py, UPSTREAM_UNREACHABLE).
    serverErrors: Object.entries(statuses).reduce((sum, [status, n]) => sum + (Number(status) >= 500 ? n : 0), 0) - (accepted['mcp-server-unreachable'] ?? 0),
    failures: run.failures.map(({ code, title, count, operations }) => ({ code, title, count, operations })),
    accepted,
  };
}
