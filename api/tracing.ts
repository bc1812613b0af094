import { startEntryTracing } from '../lib/tracing/start';

/**
 * The API's tracing, started before anything it instruments loads: api/server.ts imports this module
 * first. Null when tracing is off (no OTLP endpoint set); then nothing of OpenTelemetry is loaded.
 */
export const tracing = startEntryTracing('agent-platform-api', { fastify: true });
