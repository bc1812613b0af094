import { startEntryTracing } from '../lib/tracing/start';

/**
 * The worker's tracing, started before anything it instruments loads: worker/main.ts imports this
 * module first. Null when tracing is off (no OTLP endpoint set); then nothing of OpenTelemetry is loaded.
 */
export const tracing = startEntryTracing('agent-platform-worker', { fastify: false });
