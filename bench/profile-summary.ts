/**
 * Summarizes a V8 .cpuprofile (from BENCH_CPU_PROF): where the process spent its CPU, by self time per
 * function and per package/file, and the inclusive time under a few frames that matter for the API.
 *   npx tsx bench/profile-summary.ts /tmp/prof/api [top=25] [--from=<µs> --to=<µs>]
 * Given a directory, it reads the largest .cpuprofile in it (the main thread; tsx's loader thread
 * writes a small one of its own). `--from` / `--to`: only the samples in that window of the monotonic
 * clock, in microseconds, as a bench prints it for a phase (`bench:peer` with BENCH_CPU_PROF).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The repository's root as profiles name its files: a `file://` URL, or a plain path. */
const REPO_ROOTS = [pathToFileURL(path.join(__dirname, '..')).href + '/', path.join(__dirname, '..') + '/'];

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const flags = new Map(process.argv.slice(2).filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=') as [string, string]));
const [arg, topArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (!arg) {
  console.error('usage: tsx bench/profile-summary.ts <file.cpuprofile | directory> [top]');
  process.exit(2);
}
const file = statSync(arg).isDirectory()
  ? readdirSync(arg)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => path.join(arg, f))
      .sort((a, b) => statSync(b).size - statSync(a).size)[0]
  : arg;
if (!file) {
  console.error(`no .cpuprofile in ${arg}`);
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const [from, to] = [Number(flags.get('from') ?? -Infinity), Number(flags.get('to') ?? Infinity)];
const selfMicros = new Map<number, number>();
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i] ?? 0;
  if (at >= from && at <= to) selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);
const idle = [...selfMicros].filter(([id]) => ['(idle)', '(program)'].includes(byId.get(id)!.callFrame.functionName)).reduce((a, [, v]) => a + v, 0);
const busy = total - idle;

function where(url: string): string {
  if (!url) return '(native/vm)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  // The repository's own files, relative to its root (wherever the clone is).
  const root = REPO_ROOTS.find((r) => url.startsWith(r));
  return root ? url.slice(root.length) : url;
}
const label = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const pct = (v: number) => `${((100 * v) / busy).toFixed(1).padStart(5)}%`;

function tally(key: (n: Node) => string) {
  const m = new Map<string, number>();
  for (const [id, v] of selfMicros) {
    const n = byId.get(id)!;
    if (['(idle)', '(program)'].includes(n.callFrame.functionName)) continue;
    m.set(key(n), (m.get(key(n)) ?? 0) + v);
  }
  return [...m].sort((a, b) => b[1] - a[1]);
}

console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (percentages are of busy time)\n`);
console.log('self time by package / file:');
for (const [k, v] of tally((n) => where(n.callFrame.url)).slice(0, top)) console.log(`  ${pct(v)}  ${k}`);
console.log('\nself time by function:');
for (const [k, v] of tally(label).slice(0, top)) console.log(`  ${pct(v)}  ${k}`);

// Inclusive time: samples with a frame matching the pattern anywhere on their stack (counted once).
const patterns: [string, RegExp][] = [
  ['JSON / zod response serialization (serializerCompiler)', /fastify-type-provider-zod/],
  ['zod (validation + serialization)', /node_modules\/zod\//],
  ['fast-jwt (access token verify)', /node_modules\/fast-jwt\//],
  ['pg (driver)', /node_modules\/pg(-protocol|-types|-pool)?\//],
  ['fastify core', /node_modules\/fastify\//],
  ['@fastify/swagger, rate-limit', /node_modules\/@fastify\//],
  ['api/plugins (auth, idempotency, errors)', /\/api\/plugins\//],
  ['api/services', /\/api\/services\//],
  ['api/mappers', /\/api\/mappers/],
  ['engine/deliveries (attempts, first attempts)', /\/engine\/deliveries\//],
  ['engine/events (fan-out)', /\/engine\/events\//],
  ['engine/outbox (hand-off, starts)', /\/engine\/outbox\//],
  ['lib/outbound-http (the POST)', /\/lib\/outbound-http/],
  ['signatures (standardwebhooks, fast-sha256)', /node_modules\/(standardwebhooks|fast-sha256|@stablelib)\//],
  ['Temporal client (@temporalio, grpc)', /node_modules\/(@temporalio|@grpc|protobufjs)\//],
  ['logging (pino)', /node_modules\/(pino|sonic-boom)/],
  ['GC', /^$/],
];
const inclusive = new Map<string, number>();
for (const [id, v] of selfMicros) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    for (const [name, re] of patterns) {
      const hit = name === 'GC' ? n.callFrame.functionName === '(garbage collector)' : re.test(n.callFrame.url);
      if (hit && !seen.has(name)) {
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + v);
      }
    }
  }
}
console.log('\ninclusive time (anything on the stack under these):');
for (const [name] of patterns) console.log(`  ${pct(inclusive.get(name) ?? 0)}  ${name}`);
