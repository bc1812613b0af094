import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { configVariables } from '../../lib/config';

const ROOT = path.join(__dirname, '../..');
/** The configuration reference: one table of every variable. */
const CONFIGURATION = fs.readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
/** The benchmarks' reference, which names each bench's settings. */
const BENCHMARKS = fs.readFileSync(path.join(ROOT, 'docs/benchmarks.md'), 'utf8');

interface Row {
  names: string[];
  defaults: string;
  meaning: string;
}

/** The rows of the configuration table: the variables a row names (`PORT` / `HOST`), its default and meaning cells. */
function configurationTable(doc: string): Row[] {
  assert.match(doc, /^# Configuration\n/, 'docs/configuration.md begins with "# Configuration"');
  return doc
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      // Cells are split on " | " (a cell's own text may hold a `|` inside backticks only as `\|`).
      const cells = line.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim());
      return { names: [...cells[0]!.matchAll(/`([A-Z][A-Z0-9_]*\*?)`/g)].map((m) => m[1]!), defaults: cells[1] ?? '', meaning: cells[2] ?? '' };
    });
}

/** Names of environment variables read as `process.env.NAME`, `process.env['NAME']` or named as a locator's `envVar` in the files under `dirs`. */
function variablesReadUnder(dirs: string[]): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (file: string) => {
    if (fs.statSync(file).isDirectory()) return fs.readdirSync(file).forEach((f) => visit(path.join(file, f)));
    if (!file.endsWith('.ts')) return;
    const text = fs.readFileSync(file, 'utf8');
    for (const re of [/process\.env\.([A-Z][A-Z0-9_]*)/g, /process\.env\[['"]([A-Z][A-Z0-9_]*)['"]\]/g, /envVar: '([A-Z][A-Z0-9_]*)'/g]) {
      for (const m of text.matchAll(re)) if (!found.has(m[1]!)) found.set(m[1]!, path.relative(ROOT, file));
    }
  };
  dirs.forEach((d) => visit(path.join(ROOT, d)));
  return found;
}

/** Read by our code but not configuration: the system's PATH. */
const NOT_CONFIGURATION = new Set(['PATH']);

describe('the configuration table (docs/configuration.md)', () => {
  const rows = configurationTable(CONFIGURATION);
  const rowOf = (name: string) => rows.find((r) => r.names.includes(name));

  it('has a row for every variable of lib/config.ts, with its default and a meaning', () => {
    assert.ok(Object.keys(configVariables).length > 30, 'the config module lists its variables');
    for (const [name, schema] of Object.entries(configVariables)) {
      const row = rowOf(name);
      assert.ok(row, `${name} (lib/config.ts) is missing from the configuration table`);
      assert.ok(row.meaning.length > 0, `${name}: the configuration table says nothing of what it means`);
      assert.ok(row.defaults.length > 0, `${name}: the configuration table gives no default`);
      const parsed = schema.safeParse(undefined);
      if (parsed.success && parsed.data === undefined) {
        // An optional variable without a default: the table says it is unset by default, and what that means.
        assert.match(row.defaults, /^unset\b/, `${name}: optional without a default, so the table's default should say "unset", not "${row.defaults}"`);
      } else if (parsed.success) {
        const shown = String(parsed.data);
        assert.ok(row.defaults.includes(`\`${shown}\``), `${name}: the table's default "${row.defaults}" does not show \`${shown}\`, the default of lib/config.ts`);
      }
    }
  });

  it('names only variables that something reads', () => {
    const read = variablesReadUnder(['api', 'activities', 'db', 'lib', 'scripts', 'worker', 'workflows', 'test/helpers']);
    for (const row of rows) {
      for (const name of row.names) {
        if (name === 'BENCH_*') continue; // the next test
        assert.ok(name in configVariables || read.has(name), `${name} is in the configuration table but nothing reads it`);
      }
    }
  });

  it('has a row for every variable the entry points and scripts read outside lib/config.ts', () => {
    const read = variablesReadUnder(['api', 'activities', 'db', 'lib', 'scripts', 'worker', 'workflows']);
    assert.ok(read.has('TEMPORAL_CLI_PATH'), 'the scan finds the locators\' variables');
    for (const [name, file] of read) {
      if (NOT_CONFIGURATION.has(name)) continue;
      assert.ok(rowOf(name), `${name} (read in ${file}) is missing from the configuration table`);
    }
  });

  it('points to the benchmarks\' settings, and docs/benchmarks.md names each of them', () => {
    assert.ok(rowOf('BENCH_*'), 'a BENCH_* row in the configuration table');
    const named = new Set<string>();
    const visit = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) visit(file);
        else if (entry.name.endsWith('.ts')) for (const m of fs.readFileSync(file, 'utf8').matchAll(/\bBENCH_[A-Z0-9_]*[A-Z0-9]\b/g)) named.add(m[0]);
      }
    };
    visit(path.join(ROOT, 'bench'));
    assert.ok(named.size > 10, 'the scan finds the benchmarks\' settings');
    named.delete('BENCH_DATABASE_URL'); // bench/run.ts hands it to its own child servers; not a setting
    named.delete('BENCH_METRICS_ENABLED'); // the same, for its metrics-off server
    for (const name of named) assert.ok(BENCHMARKS.includes(`\`${name}\``), `${name} (bench/) is not named in docs/benchmarks.md`);
  });
});
