import type * as Otel from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { ConfigError, tracingConfig, type TracingConfig } from '../config';
import { linkCallerTrace, useTracingApi } from './context';
import { UrlScrubbingProcessor } from './scrub';
import { useTemporalTracing } from './temporal';

/** A started tracing SDK: `shutdown()` exports what is still batched (call it before the process exits). */
export interface Tracing {
  shutdown(): Promise<void>;
}

/** Routes whose requests make no span: probes and scrapes, many a minute and never part of a user's request. */
const UNTRACED_ROUTE = /^\/(metrics|api\/health)(\/|$)/;

/**
 * Starts OpenTelemetry tracing when OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) is set, and
 * does nothing else otherwise: no OpenTelemetry module is loaded, so tracing off costs nothing. It must
 * run before the modules it instruments are loaded (the entry points import it first): `pg` (a span per
 * query inside a traced operation), Fastify (`@fastify/otel`: the request span, continuing an incoming
 * `traceparent`), Node's HTTP client (a span per outgoing request, with `traceparent`: deliveries, tools)
 * and `fetch` (the model client). Temporal's clients, workflows and activities are traced by
 * `@temporalio/interceptors-opentelemetry` (lib/tracing/temporal.ts). Spans are batched and exported
 * over OTLP/HTTP; the SDK reads the standard OTEL_* variables (docs/configuration.md).
 * The modules are required, not imported, so that they load only here and before what they patch.
 */
export function startTracing(defaultServiceName: string, options: { fastify: boolean }): Tracing | null {
  const config = tracingConfig(defaultServiceName);
  return config ? load(config, options) : null;
}

function load(config: TracingConfig, options: { fastify: boolean }): Tracing {
  const api = require('@opentelemetry/api') as typeof Otel;
  const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { Resource, detectResourcesSync, envDetectorSync } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { OTLPTraceExporter } = (
    config.protocol === 'http/json' ? require('@opentelemetry/exporter-trace-otlp-http') : require('@opentelemetry/exporter-trace-otlp-proto')
  ) as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');

  // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME (which wins) over the process's default name.
  const resource = new Resource({ 'service.name': config.serviceName }).merge(detectResourcesSync({ detectors: [envDetectorSync] }));
  // Every span's URL attributes masked before export (lib/tracing/scrub.ts).
  const processor = new UrlScrubbingProcessor(new BatchSpanProcessor(new OTLPTraceExporter()));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // The global provider, AsyncLocalStorage context, and W3C trace context alone: no baggage propagator, so
  // no caller's baggage is taken in and none is sent out (docs/operations.md § Tracing).
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  provider.register({ propagator: new W3CTraceContextPropagator() });

  const wanted = (name: (typeof config.disabled)[number]) => !config.disabled.includes(name);
  const instrumentations: Instrumentation[] = [];
  // Incoming requests are Fastify's (below); outgoing ones only inside a trace (a delivery attempt, a tool step).
  if (wanted('http')) instrumentations.push(new HttpInstrumentation({ disableIncomingRequestInstrumentation: true, requireParentforOutgoingSpans: true }));
  if (wanted('undici')) instrumentations.push(new UndiciInstrumentation({ requireParentforSpans: true }));
  // Statement text without its values; only inside a trace, so the reconciler's polling makes no traces. A span
  // per query, none per checkout from the pool (pg-pool.connect doubled the spans of every request's queries).
  class QuerySpans extends PgInstrumentation {
    override init() {
      return super.init().filter((definition) => definition.name !== 'pg-pool');
    }
  }
  if (wanted('pg')) instrumentations.push(new QuerySpans({ requireParentSpan: true }));
  if (options.fastify && wanted('fastify')) {
    const { FastifyOtelInstrumentation } = require('@fastify/otel') as typeof import('@fastify/otel');
    instrumentations.push(
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        // One span per request: not one more per handler and per hook of every request (each span costs CPU).
        instrumentHandler: false,
        instrumentHooks: false,
        ignorePaths: (route: { url: string }) => UNTRACED_ROUTE.test(route.url),
        // A public route's caller's trace is a link of the request's own trace (lib/tracing/context.ts).
        requestHook: (span: Otel.Span, request: { raw: { headers: object } }) => linkCallerTrace(span, request.raw.headers),
      }) as unknown as Instrumentation, // built on a newer @opentelemetry/instrumentation; registered the same way
    );
  }
  registerInstrumentations({ tracerProvider: provider, instrumentations });

  const temporal = require('@temporalio/interceptors-opentelemetry/lib/worker') as typeof import('@temporalio/interceptors-opentelemetry/lib/worker');
  const { OpenTelemetryWorkflowClientInterceptor } = require('@temporalio/interceptors-opentelemetry/lib/client') as typeof import('@temporalio/interceptors-opentelemetry/lib/client');
  const activityInterceptors: ActivityInterceptorsFactory = (ctx) => ({
    inbound: new temporal.OpenTelemetryActivityInboundInterceptor(ctx),
    outbound: new temporal.OpenTelemetryActivityOutboundInterceptor(ctx),
  });
  useTemporalTracing({
    clientInterceptors: [new OpenTelemetryWorkflowClientInterceptor()],
    workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
    activityInterceptors: [activityInterceptors],
    // The workflow's spans, made in its sandbox, are exported by this process with the others.
    sinks: { exporter: temporal.makeWorkflowExporter(processor, provider.resource) },
  });
  useTracingApi(api, { captureGenAiContent: config.captureGenAiContent });
  return { shutdown: () => provider.shutdown() };
}

/** startTracing for an entry point: a bad OTEL_* value stops the process with one line naming it, as loadConfig does. */
export function startEntryTracing(defaultServiceName: string, options: { fastify: boolean }): Tracing | null {
  try {
    return startTracing(defaultServiceName, options);
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  }
}
