import assert from 'node:assert/strict';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { TestApp } from './app';

type Parsed = ReturnType<typeof parsePrometheusTextFormat>;

/** A scrape: every family as the parser reads it, and the histograms' samples one by one (see `scrape`). */
export interface Families {
  families: Parsed;
  histogramSamples: Parsed;
}

/**
 * GET /metrics of the app, read by a Prometheus text-format parser (a line it cannot read throws). The parser
 * folds a histogram's samples into one whatever their labels, so the text is also read with the histograms'
 * `# TYPE` lines left out: their `_bucket`, `_sum` and `_count` samples then come out as families of their own,
 * each sample with its labels.
 */
export async function scrape(app: TestApp, headers: Record<string, string> = {}): Promise<Families> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusTextFormat(res.body);
  const untyped = res.body.split('\n').filter((line) => !/^# (TYPE \S+ histogram|HELP \S+)/.test(line) || !isHistogramLine(line, families)).join('\n');
  return { families, histogramSamples: parsePrometheusTextFormat(untyped) };
}

/**
 * The engine's figures of a scrape come from a snapshot read at most once per METRICS_SNAPSHOT_MS: suites
 * that read them set it to this, and scrape with `scrapeFresh` where a change must show.
 */
export const TEST_METRICS_SNAPSHOT_MS = 100;

/** A scrape whose engine figures were read after this call began (the snapshot has expired by then). */
export async function scrapeFresh(app: TestApp, headers: Record<string, string> = {}): Promise<Families> {
  await new Promise((r) => setTimeout(r, TEST_METRICS_SNAPSHOT_MS + 20));
  return scrape(app, headers);
}

function isHistogramLine(line: string, families: Parsed): boolean {
  const name = line.split(' ')[2];
  return families.some((f) => f.name === name && f.type === 'HISTOGRAM');
}

const matches = (labels: Record<string, string> | undefined, wanted: Record<string, string>) =>
  Object.entries(wanted).every(([k, v]) => labels?.[k] === v);

/** The family `name`; fails when the scrape has none. */
export function family(scraped: Families, name: string) {
  const found = scraped.families.find((f) => f.name === name);
  assert.ok(found, `no metric ${name} in the scrape`);
  return found;
}

/** The value of the counter or gauge sample of `name` with these labels (0 when there is no such sample). */
export function sampleValue(scraped: Families, name: string, labels: Record<string, string> = {}): number {
  const sample = family(scraped, name).metrics.find((m) => matches(m.labels, labels));
  return sample ? Number(sample.value) : 0;
}

/** The histogram `name`'s series with these labels: its count, sum and cumulative buckets by `le`. */
export function histogram(scraped: Families, name: string, labels: Record<string, string> = {}) {
  assert.equal(family(scraped, name).type, 'HISTOGRAM');
  // One family per run of lines: a series' _bucket lines, then its _sum, its _count, the next series' _bucket…
  const samples = (suffix: string) => scraped.histogramSamples.filter((f) => f.name === `${name}${suffix}`).flatMap((f) => f.metrics);
  const one = (suffix: string) => Number(samples(suffix).find((m) => matches(m.labels, labels))?.value ?? 0);
  const buckets: Record<string, number> = {};
  for (const m of samples('_bucket')) {
    const { le, ...rest } = m.labels ?? {};
    if (le !== undefined && matches(rest, labels)) buckets[le] = Number(m.value);
  }
  return { count: one('_count'), sum: one('_sum'), buckets };
}
