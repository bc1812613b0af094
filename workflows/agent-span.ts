import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { ContinueAsNew } from '@temporalio/workflow';
import type { RunAgent, RunOutcome } from '../engine/contract';

/**
 * A run's span in OpenTelemetry's GenAI conventions, `invoke_agent <agent name>` (INTERNAL: the agent runs
 * in-process; https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-agent-spans/), made in the run's
 * workflow so that every step's activity, and the `chat` and `execute_tool` spans they make
 * (lib/tracing/genai.ts), are in it, whichever worker makes them. It uses the tracer that tracing's workflow
 * interceptors register in the workflow sandbox (lib/tracing/temporal.ts): its ids come from the sandbox's
 * seeded randomness and its clock is workflow time, so a replay makes the same span, and the interceptors'
 * sink exports nothing during a replay. It sends no command: the run's history is the same with or without
 * it. While tracing is off no tracer is registered there, and the API's no-op tracer just calls `fn`.
 */
export interface AgentSpan {
  /** The run's agent, once its first activity told it: the span's name and gen_ai.agent.* attributes. */
  agent(agent: RunAgent): void;
}

export function inAgentSpan(runId: string, fn: (span: AgentSpan) => Promise<RunOutcome>): Promise<RunOutcome> {
  const attributes = { 'gen_ai.operation.name': 'invoke_agent', 'agent_platform.run.id': runId };
  return trace.getTracer('agent-platform').startActiveSpan('invoke_agent', { kind: SpanKind.INTERNAL, attributes }, async (span: Span) => {
    const handle: AgentSpan = {
      agent(agent) {
        span.updateName(`invoke_agent ${agent.name}`);
        span.setAttributes({
          'gen_ai.agent.id': agent.id,
          'gen_ai.agent.name': agent.name,
          ...(agent.model ? { 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': agent.model } : {}),
        });
      },
    };
    try {
      const outcome = await fn(handle);
      if (outcome.status === 'failed') {
        span.setAttribute('error.type', 'run_failed');
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the run failed' });
      }
      return outcome;
    } catch (err) {
      // A continue-as-new (a run that waited long for a slot) is no failure: the next run of the workflow makes its own span.
      if (!(err instanceof ContinueAsNew)) {
        span.setAttribute('error.type', (err as Error)?.name || '_OTHER');
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
      }
      throw err;
    } finally {
      span.end();
    }
  });
}
