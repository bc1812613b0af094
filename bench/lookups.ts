/**
 * `npm run bench:lookups`: what a URL check's name resolution costs (lib/network.ts resolveHost: c-ares, a
 * resolver of its own per lookup so that it can be cancelled at its deadline), on the path of every
 * delivery attempt and tool call to a named host, and what lookups that never end cost everyone else.
 *
 * Against a loopback nameserver (bench/kit/nameserver.ts) that answers `bench.test` at once:
 *   sequential: BENCH_LOOKUPS lookups one after another (µs each, mean and p99);
 *   concurrent: the same, 16 at a time (lookups per second);
 *   shared:     the same sequential lookups on one shared dns.Resolver (what a resolver per lookup adds).
 * Then, with 100 lookups in flight of names the nameserver never answers (the engine's, uncounted), 4
 * concurrent scrypt hashes (the password hash of logins) against the same 4 with nothing in flight, and
 * the event loop's delay (p99) meanwhile.
 */
import { scrypt } from 'node:crypto';
import dns from 'node:dns';
import { setMaxListeners } from 'node:events';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { resolveHost } from '../lib/network';
import { startNameserver } from './kit/nameserver';
import { percentile } from './kit/stats';

const LOOKUPS = Number(process.env.BENCH_LOOKUPS ?? 2000);

let nameserver: { close(): Promise<void> } | undefined;

const summary = (us: number[]) => {
  const sorted = [...us].sort((a, b) => a - b);
  return `mean ${(us.reduce((a, b) => a + b, 0) / us.length).toFixed(0)} µs, p99 ${percentile(sorted, 99).toFixed(0)} µs`;
};

const hash = () =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now();
    scrypt('correct horse battery', 'salt-salt-salt-1', 64, { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }, (err) =>
      err ? reject(err) : resolve(performance.now() - started),
    );
  });
const fourHashes = async () => Math.max(...(await Promise.all([hash(), hash(), hash(), hash()])));

async function main() {
  const ns = (nameserver = await startNameserver({ 'bench.test': '93.184.215.14' }));
  const servers = [ns.address];
  const opts = { servers, accountId: null };

  const sequential: number[] = [];
  for (let i = 0; i < LOOKUPS; i++) {
    const started = performance.now();
    await resolveHost('bench.test', opts);
    sequential.push((performance.now() - started) * 1000);
  }
  console.log(`sequential: ${LOOKUPS} lookups, ${summary(sequential)}`);

  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next++ < LOOKUPS) await resolveHost('bench.test', opts);
  }));
  console.log(`concurrent (16 at a time): ${Math.round(LOOKUPS / ((performance.now() - started) / 1000))} lookups/s`);

  const shared = new dns.promises.Resolver({ timeout: 3000, tries: 1 });
  shared.setServers(servers);
  const reused: number[] = [];
  for (let i = 0; i < LOOKUPS; i++) {
    const t = performance.now();
    await Promise.allSettled([shared.resolve4('bench.test'), shared.resolve6('bench.test')]);
    reused.push((performance.now() - t) * 1000);
  }
  console.log(`shared resolver: ${summary(reused)}`);

  const idle = await fourHashes();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const stop = new AbortController();
  setMaxListeners(200, stop.signal); // one signal stops every lookup of the bench
  const stuck = Array.from({ length: 100 }, (_, i) => resolveHost(`never-${i}.slow.test`, { ...opts, signal: stop.signal }).catch(() => undefined));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const busy = await fourHashes();
  delay.disable();
  console.log(
    `4 concurrent scrypt hashes: ${idle.toFixed(0)} ms with nothing in flight, ${busy.toFixed(0)} ms with 100 never-answered lookups in flight; ` +
      `event loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms meanwhile`,
  );
  stop.abort();
  await Promise.all(stuck);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    await nameserver?.close();
  });
