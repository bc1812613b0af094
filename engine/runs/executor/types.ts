import type { AgentRow } from '../../../db/repositories/agents';
import type { NewRunStep, RunStepRow } from '../../../db/repositories/run-steps';
import type { ThreadMessageRow } from '../../../db/repositories/thread-messages';
import type { ToolRow } from '../../../db/repositories/tools';

/**
 * How a run executes an agent (docs/architecture.md § When a run is started): an executor turns a run into steps and the finished
 * steps into the run's result. The engine (engine/runs/) owns everything else: the run row and
 * its slot, each step as its own activity and row (so a step that finished is never made again), the
 * time limit, the output bound and the events. Each step type has one way of being made whatever the
 * executor (a tool step calls the tool, tool-call.ts; a model step calls the model, model-step.ts and
 * model-client.ts). Two executors: the tool executor (default-executor.ts: every enabled tool once, in
 * order) and the model executor (model-executor.ts: a model step that adds the tool calls it asks
 * for); select.ts says which one runs an agent.
 */
export interface AgentExecutor {
  /** The steps a run starts with, in order, planned when it starts running. */
  plan(ctx: PlanContext): NewRunStep[];
  /**
   * What a tool step calls: its tool (config as stored, secrets opened; possibly adjusted) and input, or
   * why the call is not made (recorded as the step's error).
   */
  toolCall(step: RunStepRow, tool: ToolRow, runInput: unknown): { tool: ToolRow; input: unknown } | { error: string };
  /**
   * The run's output and error from its steps, once they are done or its time is up (`timedOut`:
   * steps may be unfinished). The engine bounds the output it stores (output-cap.ts).
   */
  compose(ctx: ComposeContext): ExecutionResult;
}

export interface PlanContext {
  agent: AgentRow;
  /** The agent's enabled tools in created order (configs as stored: secrets still sealed). */
  tools: ToolRow[];
  /** The run's input: the API caller's `input`, or `{ source, triggerId, fireId, payload }` for a triggered run. */
  input: unknown;
  /** What the run remembers of its thread (memoryConfig), oldest first; empty without a thread. */
  history: ThreadMessageRow[];
}

export interface ComposeContext {
  input: unknown;
  /** Every step of the run, in order. */
  steps: RunStepRow[];
  timedOut: boolean;
}

/** One tool's outcome in the run output. */
export type ToolOutcome =
  | { type: ToolRow['type']; ok: true; result: unknown; durationMs: number }
  | { type: ToolRow['type']; ok: false; error: string; durationMs: number };

/**
 * The default executor's output, stored in `runs.output` and carried in agent.completed as `data.output`:
 * `{ input, tools: { "<tool name>": ToolOutcome }, summary }`. Tools are keyed by name so agent_output
 * triggers can filter on `tools.<name>.ok` or `tools.<name>.result.<field>`; a second tool with the
 * same name is keyed `<name> (2)`, and so on.
 */
export interface RunOutput {
  input: unknown;
  tools: Record<string, ToolOutcome>;
  summary: string;
  [key: string]: unknown;
}

export interface ExecutionResult {
  output: Record<string, unknown>;
  /** Set when the run failed; the output is stored all the same. */
  error: string | null;
}
