import { startTracing } from '../../lib/tracing/start';

/**
 * Imported first by bench/serve-api-traced.ts: the API's tracing, started before the modules it
 * instruments load, exporting to the OTLP endpoint bench/run.ts gives it (OTEL_EXPORTER_OTLP_ENDPOINT).
 */
if (!startTracing('agent-platform-api', { fastify: true })) throw new Error('bench/serve-api-traced.ts needs OTEL_EXPORTER_OTLP_ENDPOINT');
