import type { RunStepRow } from '../../../db/repositories/run-steps';
import type { ToolRow } from '../../../db/repositories/tools';
import { MCP_NEEDS_MODEL } from './mcp-tool';
import { capError, fitSlots, MAX_RUN_OUTPUT_BYTES, type Slot } from './output-cap';
import type { AgentExecutor, ComposeContext, ExecutionResult, RunOutput, ToolOutcome } from './types';

/** Tool names are not unique per agent: a repeated name gets ` (2)`, ` (3)` … so no outcome is lost. */
function keyFor(name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name;
  let n = 2;
  while (taken.has(`${name} (${n})`)) n++;
  return `${name} (${n})`;
}

function durationMs(step: RunStepRow, end: Date): number {
  if (!step.started_at) return 0;
  return Math.max(0, (step.finished_at ?? end).getTime() - step.started_at.getTime());
}

/** A tool step's outcome in the run output; a step the time limit cut short failed with `timed out`. */
function outcomeOf(step: RunStepRow, end: Date): ToolOutcome {
  const type = step.tool_type as ToolRow['type'];
  const ms = durationMs(step, end);
  if (!step.finished_at) return { type, ok: false, error: step.started_at ? 'timed out' : 'not started: the run timed out', durationMs: ms };
  return step.error === null ? { type, ok: true, result: step.output, durationMs: ms } : { type, ok: false, error: step.error, durationMs: ms };
}

/**
 * Makes the output fit MAX_RUN_OUTPUT_BYTES: the largest of the input and the tools' results are
 * replaced by `{ truncated: true, bytes }`, one at a time, until it fits; the rest of each outcome
 * (type, ok, durationMs) stays, so filters on `tools.<name>.ok` keep working. (Errors are short already.)
 */
function fitOutput(output: RunOutput): void {
  const slots: Slot[] = [{ holder: output, key: 'input' }];
  for (const outcome of Object.values(output.tools)) if (outcome.ok) slots.push({ holder: outcome, key: 'result' });
  fitSlots(output, slots, MAX_RUN_OUTPUT_BYTES);
}

/**
 * The default executor: one tool step per enabled tool, in created order, each called with the run's
 * input. A tool's failure (non-2xx, timeout, refused target, bad config) is recorded as `ok: false` and
 * does not stop the others. The run succeeds when it has no tools or at least one tool succeeded; it
 * fails when every tool failed, or when its time ran out.
 */
export function createDefaultExecutor(): AgentExecutor {
  return {
    plan({ tools }) {
      const taken = new Set<string>();
      return tools.map((tool) => {
        const name = keyFor(tool.name, taken);
        taken.add(name);
        return { type: 'tool', name, toolId: tool.id, toolType: tool.type };
      });
    },

    toolCall: (_step, tool, runInput) => (tool.type === 'mcp' ? { error: MCP_NEEDS_MODEL } : { tool, input: runInput }),

    compose({ input, steps, timedOut }: ComposeContext): ExecutionResult {
      const end = new Date();
      const tools: Record<string, ToolOutcome> = {};
      for (const step of steps) if (step.type === 'tool') tools[step.name] = outcomeOf(step, end);
      const entries = Object.entries(tools);
      const succeeded = entries.filter(([, o]) => o.ok).length;
      const output: RunOutput = {
        input,
        tools,
        summary: entries.length === 0 ? 'no enabled tools' : `${succeeded} of ${entries.length} tools succeeded`,
      };
      let error: string | null = null;
      if (timedOut) error = 'timed out';
      else if (entries.length > 0 && succeeded === 0) {
        error = capError(`every tool failed (${entries.map(([name, o]) => `${name}: ${o.ok ? '' : o.error}`).join('; ')})`);
      }
      fitOutput(output);
      return { output, error };
    },
  };
}
