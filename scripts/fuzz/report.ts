import fs from 'node:fs';
import path from 'node:path';

export interface FuzzSummary {
  requests: number;
  testCases: number;
  operations: number;
  statuses: Record<string, number>;
  serverErrors: number;
  failures: Array<{ title: string; count: number; operations: string[] }>;
}

export function summarize(reportDir: string): FuzzSummary {
  const files = fs.readdirSync(reportDir);
  const json = JSON.parse(fs.readFileSync(path.join(reportDir, files.find((f) => f.endsWith('.json'))!), 'utf8'));
  return { requests: 0, testCases: json.test_cases.generated, operations: json.operations?.tested ?? 0, statuses: {}, serverErrors: 0, failures: json.failures };
}
