/**
 * `npm run bench:fairness`: one tenant's load against another tenant's latency on Temporal task queues,
 * on a fresh in-memory dev server per round (docs/architecture.md § Limits and fairness).
 *
 * (a) Fairness. A worker with BENCH_SLOTS activity slots; tenant B starts BENCH_FLOOD workflows at once
 *     (one BENCH_TASK_MS activity each, like a fire's recordFire), then tenant A starts BENCH_PROBES, one
 *     every 100 ms. Each workflow has its tenant as fairness key (Priority.fairnessKey); the round is run
 *     with the dev server's `matching.enableFairness` off, then on.
 * (b) Slow HTTP. Fairness on; B starts 2 × BENCH_SLOTS workflows whose activity takes BENCH_SLOW_MS (a
 *     slow endpoint's delivery attempt), then A probes as above. Once with those activities on A's task
 *     queue (the same slots), once on a task queue of their own with its own worker and slots.
 * Prints A's latency (start → completed) p50/max per round.
 * Settings: BENCH_FLOOD (600), BENCH_PROBES (10), BENCH_SLOTS (4), BENCH_TASK_MS (40), BENCH_SLOW_MS (3000).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { locate, TEMPORAL_CLI } from '../scripts/temporal-binaries';
import { setting } from './kit/settings';
import { percentile } from './kit/stats';

const FLOOD = setting('BENCH_FLOOD', 600);
const PROBES = setting('BENCH_PROBES', 10);
const SLOTS = setting('BENCH_SLOTS', 4);
const TASK_MS = setting('BENCH_TASK_MS', 40);
const SLOW_MS = setting('BENCH_SLOW_MS', 3000);
const MAIN = 'fairness-bench';
const SLOW = 'fairness-bench-slow';

type Bundle = Awaited<ReturnType<typeof bundleWorkflowCode>>;

/**
 * One round on its own dev server: B's load (`flood` workflows of `floodMs`, their activity on
 * `floodQueue`), then A's probes; answers A's latencies.
 */
async function round(bundle: Bundle, opts: { fairness: boolean; flood: number; floodMs: number; floodQueue: string }) {
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: await locate(TEMPORAL_CLI, () => {}) },
      ip: '127.0.0.1',
      extraArgs: opts.fairness ? ['--dynamic-config-value', 'matching.enableFairness=true'] : [],
      log: { format: 'pretty', level: 'never' },
    },
  });
  try {
    const activities = { work: (ms: number) => sleep(ms) };
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: MAIN, workflowBundle: bundle, maxConcurrentActivityTaskExecutions: SLOTS, activities });
    const slowWorker = await Worker.create({ connection: env.nativeConnection, taskQueue: SLOW, maxConcurrentActivityTaskExecutions: SLOTS, activities });
    const slowRunning = slowWorker.run();
    try {
      return await worker.runUntil(async () => {
        const start = (tenant: string, i: number, ms: number, activityQueue: string) =>
          env.client.workflow.start('tenantTask', {
            taskQueue: MAIN,
            workflowId: `${tenant}-${i}`,
            args: [ms, activityQueue],
            priority: { fairnessKey: tenant },
          });
        const flood = await Promise.all(Array.from({ length: opts.flood }, (_, i) => start('B', i, opts.floodMs, opts.floodQueue)));
        const latencies: number[] = [];
        for (let i = 0; i < PROBES; i++) {
          const t = Date.now();
          const handle = await start('A', i, TASK_MS, MAIN);
          void handle.result().then(() => latencies.push(Date.now() - t));
          await sleep(100);
        }
        await Promise.all(flood.map((h) => h.result()));
        while (latencies.length < PROBES) await sleep(50);
        return { p50: percentile(latencies, 50), max: Math.max(...latencies) };
      });
    } finally {
      slowWorker.shutdown();
      await slowRunning;
    }
  } finally {
    await env.teardown();
  }
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./fairness-workflow'), logger: new DefaultLogger('ERROR') });
  const show = (label: string, r: { p50: number; max: number }) => console.log(`  ${label}: A's latency p50 ${r.p50} ms, max ${r.max} ms`);

  console.log(`(a) B floods ${FLOOD} workflows (one ${TASK_MS} ms activity each, ${SLOTS} activity slots); A starts ${PROBES}, one per 100 ms`);
  for (const fairness of [false, true]) {
    show(`fairness ${fairness ? 'on ' : 'off'}`, await round(bundle, { fairness, flood: FLOOD, floodMs: TASK_MS, floodQueue: MAIN }));
  }
  console.log(`(b) fairness on; B starts ${2 * SLOTS} workflows whose activity takes ${SLOW_MS} ms (a slow endpoint); A as above`);
  for (const floodQueue of [MAIN, SLOW]) {
    show(floodQueue === MAIN ? 'slow activities on A\'s task queue ' : 'slow activities on their own queue', await round(bundle, { fairness: true, flood: 2 * SLOTS, floodMs: SLOW_MS, floodQueue }));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
