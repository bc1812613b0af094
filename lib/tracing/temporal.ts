import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { ActivityInterceptorsFactory, WorkerOptions } from '@temporalio/worker';

/**
 * What Temporal's clients and workers add when tracing is on (`@temporalio/interceptors-opentelemetry`,
 * set by lib/tracing/start.ts): a client interceptor that starts each workflow in a span and sends the
 * trace context in the workflow's headers; workflow interceptors (bundled with the workflow code) and
 * their sink, which export the workflow's spans and pass the context on to its activities; activity
 * interceptors, which run each activity in a span of that trace. While tracing is off, all are empty.
 */
export interface TemporalTracing {
  clientInterceptors: WorkflowClientInterceptor[];
  workflowModules: string[];
  activityInterceptors: ActivityInterceptorsFactory[];
  sinks: NonNullable<WorkerOptions['sinks']>;
}

let tracing: TemporalTracing | null = null;

export function useTemporalTracing(t: TemporalTracing): void {
  tracing = t;
}

/** The interceptors of a Temporal client (`{ workflow: [...] }`), or undefined when tracing is off. */
export function tracingClientInterceptors(): { workflow: WorkflowClientInterceptor[] } | undefined {
  return tracing ? { workflow: tracing.clientInterceptors } : undefined;
}

/** The workflow interceptor modules to bundle with the workflow code (none when tracing is off). */
export function tracingWorkflowModules(): string[] {
  return tracing?.workflowModules ?? [];
}

/** Worker options for tracing: activity interceptors and, for a worker running workflows, the workflow spans' sink. */
export function tracingWorkerOptions(runsWorkflows: boolean): { interceptors?: { activity: ActivityInterceptorsFactory[] }; sinks?: TemporalTracing['sinks'] } {
  if (!tracing) return {};
  return { interceptors: { activity: tracing.activityInterceptors }, ...(runsWorkflows ? { sinks: tracing.sinks } : {}) };
}
