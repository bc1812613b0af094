import type { AgentRow } from '../../db/repositories/agents';
import type { ToolRow } from '../../db/repositories/tools';

/**
 * How a run executes an agent (DESIGN §4 Agent runs). The run activity owns the run row, the events and
 * retries; an executor only turns (agent, tools, input) into an output. Another executor (an LLM loop,
 * a graph interpreter) can replace the default one without touching the engine.
 */
export interface ExecutorContext {
  agent: AgentRow;
  /** The agent's enabled tools in created order, with their secrets already opened (plaintext). */
  tools: ToolRow[];
  /** The run's input: the API caller's `input`, or `{ source, triggerId, fireId, payload }` for a triggered run. */
  input: unknown;
  /** Aborted when the activity is cancelled; an executor stops starting new work. */
  signal?: AbortSignal;
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

export interface AgentExecutor {
  execute(ctx: ExecutorContext): Promise<ExecutionResult>;
}
