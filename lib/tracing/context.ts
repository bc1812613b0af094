import type * as Otel from '@opentelemetry/api';

/**
 * The engine's own spans and the trace context it carries across Postgres, through the OpenTelemetry API
 * that lib/tracing/start.ts hands over once tracing is on. While tracing is off nothing of OpenTelemetry
 * is loaded and every helper here is a plain call: `inSpan` calls its function, `traceCarrier` answers
 * undefined.
 */
let otel: typeof Otel | null = null;
/** OTEL_GENAI_CAPTURE_CONTENT (lib/config.ts tracingConfig). */
let genAiContent = false;

/** Called once by lib/tracing/start.ts when the SDK is registered. */
export function useTracingApi(api: typeof Otel, options: { captureGenAiContent: boolean } = { captureGenAiContent: false }): void {
  otel = api;
  genAiContent = options.captureGenAiContent;
}

/** The OpenTelemetry API while tracing is on, else null (lib/tracing/genai.ts makes its spans with it). */
export function tracingApi(): typeof Otel | null {
  return otel;
}

/** Whether the GenAI spans may carry prompt and completion text (OTEL_GENAI_CAPTURE_CONTENT=true). */
export function genAiContentCaptured(): boolean {
  return otel !== null && genAiContent;
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

/**
 * Runs `fn` in the trace context a carrier holds (as stored by traceCarrier), so the spans it makes join
 * that trace. The carrier is restored onto an empty context, never onto whatever is active: a drain
 * handling several tenants' work puts none's trace (or baggage) on another's.
 */
export function withTraceCarrier<T>(carrier: TraceCarrier | undefined, fn: () => T): T {
  if (!otel || !carrier) return fn();
  return otel.context.with(otel.propagation.extract(otel.ROOT_CONTEXT, carrier), fn);
}

/** Paths whose requests come from strangers (no credential): they start a trace of their own. */
const PUBLIC_PATH = /^\/api\/(hooks\/|auth\/(register|login|refresh|logout)(\/|\?|$))/;
/** Where a stranger's trace headers are kept once taken off its request. */
const CALLER_TRACE = Symbol('caller trace context');
type Detached = { [CALLER_TRACE]?: TraceCarrier };

/**
 * Before routing (Fastify's rewriteUrl): a public route's request has its trace headers taken off, so its
 * request span starts a new trace instead of continuing a stranger's (who could force sampling or put
 * their trace on a tenant's deliveries), and `baggage` is dropped (docs/operations.md § Tracing). The caller's
 * `traceparent` is kept aside, to become a link of the new trace (linkCallerTrace).
 */
export function detachCallerTrace(req: { url?: string; headers: Record<string, string | string[] | undefined> }): void {
  if (!PUBLIC_PATH.test(req.url ?? '')) return;
  const { traceparent, tracestate } = req.headers;
  delete req.headers.traceparent;
  delete req.headers.tracestate;
  delete req.headers.baggage;
  if (typeof traceparent === 'string') {
    (req.headers as Detached)[CALLER_TRACE] = { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) };
  }
}

/** The request span's link to the caller's trace kept aside by detachCallerTrace (none when it is not a valid one). */
export function linkCallerTrace(span: Otel.Span, headers: object): void {
  const carrier = (headers as Detached)[CALLER_TRACE];
  if (!otel || !carrier) return;
  const linked = otel.trace.getSpanContext(otel.propagation.extract(otel.ROOT_CONTEXT, carrier));
  if (linked && otel.trace.isSpanContextValid(linked)) span.addLink({ context: linked });
}
