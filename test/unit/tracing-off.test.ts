import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(__dirname, '../..');

/** Tracing's own packages: the SDK, its exporters, the instrumentations and the module patchers they bring. */
const TRACING_PACKAGE = /node_modules\/(@opentelemetry\/(?!api\/)[^/]+|@fastify\/otel|require-in-the-middle|import-in-the-middle|@temporalio\/interceptors-opentelemetry)\//;

/**
 * Loads both processes' code as their entry points do (tracing first, then the API's app, the worker and
 * the engine) in a fresh process, and answers the tracing packages it finds loaded.
 */
function tracingPackagesLoaded(env: Record<string, string>): string[] {
  const script = `
    require('./api/tracing'); require('./worker/tracing');
    require('./api/app'); require('./worker/worker'); require('./engine/compose');
    const loaded = Object.keys(require.cache).filter((file) => ${TRACING_PACKAGE}.test(file));
    console.log(JSON.stringify([...new Set(loaded.map((file) => file.replace(/.*node_modules\\//, '').split('/').slice(0, 2).join('/')))]));
  `;
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_'))) as Record<string, string>;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, env: { ...inherited, ...env }, encoding: 'utf8', timeout: 60_000 });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as string[];
}

describe('tracing off costs nothing (lib/tracing/start.ts)', () => {
  it('without an OTLP endpoint, no tracing package is loaded: no SDK, no exporter, no instrumentation patching a module', () => {
    // Only @opentelemetry/api may be there: its no-op API, which prom-client asks for (exemplars).
    assert.deepEqual(tracingPackagesLoaded({ OTEL_SERVICE_NAME: 'off', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), []);
  });

  it('with one, the SDK and every instrumentation are loaded (what the test above would find if anything loaded them eagerly)', () => {
    const loaded = tracingPackagesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    for (const name of ['@opentelemetry/sdk-trace-node', '@opentelemetry/instrumentation-pg', '@opentelemetry/instrumentation-http', '@opentelemetry/instrumentation-undici', '@fastify/otel', 'require-in-the-middle/index.js', '@temporalio/interceptors-opentelemetry']) {
      assert.ok(loaded.includes(name), `${name} is loaded with tracing on (loaded: ${loaded.join(', ')})`);
    }
  });
});
