import type * as Otel from '@opentelemetry/api';

/**
 * The engine's own spans and the trace context it carries across Postgres, through the OpenTelemetry API
 * that lib/tracing/start.ts hands over once tracing is on. While tracing is off nothing of OpenTelemetry
 * is loaded and every helper here is a plain call: `inSpan` calls its function, `traceCarrier` answers
 * undefined.
 */
let otel: typeof Otel | null = null;

/** Called once by lib/tracing/start.ts when the SDK is registered. */
export function useTracingApi(api: typeof Otel): void {
  otel = api;
}

/** W3C trace context headers (`traceparent`, optionally `tracestate`), as stored with work that waits in the outbox. */
export type TraceCarrier = Record<string, string>;

/** Runs `fn` in a span of its own (a child of the active one), ended when it settles; an error marks the span failed. */
export function inSpan<T>(name: string, attributes: Otel.Attributes, fn: () => Promise<T>): Promise<T> {
  if (!otel) return fn();
  const api = otel;
  return api.trace.getTracer('agent-platform').startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The active trace context as headers, to store with work that another process or a later moment picks up; undefined when there is none. */
export function traceCarrier(): TraceCarrier | undefined {
  if (!otel) return undefined;
  const carrier: TraceCarrier = {};
  otel.propagation.inject(otel.context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/** Runs `fn` in the trace context a carrier holds (as stored by traceCarrier), so the spans it makes join that trace. */
export function withTraceCarrier<T>(carrier: TraceCarrier | undefined, fn: () => T): T {
  if (!otel || !carrier) return fn();
  return otel.context.with(otel.propagation.extract(otel.context.active(), carrier), fn);
}
