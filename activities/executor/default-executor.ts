import type { ToolRow } from '../../db/repositories/tools';
import type { Config } from '../../lib/config';
import { runCustomTool, type CustomToolConfig } from './custom-tool';
import { coinPrices, dexPairs, predictionMarkets } from './data-tools';
import type { AgentExecutor, ExecutionResult, RunOutput, ToolOutcome } from './types';

function runTool(tool: ToolRow, input: unknown, config: Config): Promise<unknown> {
  const c = tool.config_json as never;
  switch (tool.type) {
    case 'custom':
      return runCustomTool(c as CustomToolConfig, input, { timeoutMs: config.tools.timeoutMs, allowPrivate: config.webhooks.allowPrivateTargets });
    case 'coin_prices':
      return coinPrices(c, config.tools);
    case 'dex_pairs':
      return dexPairs(c, config.tools);
    case 'prediction_markets':
      return predictionMarkets(c, config.tools);
  }
}

/** Tool names are not unique per agent: a repeated name gets ` (2)`, ` (3)` … so no outcome is lost. */
function keyFor(name: string, taken: Record<string, unknown>): string {
  if (!Object.hasOwn(taken, name)) return name;
  let n = 2;
  while (Object.hasOwn(taken, `${name} (${n})`)) n++;
  return `${name} (${n})`;
}

/**
 * The default executor: runs the agent's enabled tools one after another, in created order, each with
 * the run input, and records each outcome (RunOutput). A tool's failure (non-2xx, timeout, refused
 * target, bad config) is recorded as `ok: false` and does not stop the others. The run succeeds when
 * it has no tools or at least one tool succeeded; it fails only when every tool failed.
 */
export function createDefaultExecutor(config: Config): AgentExecutor {
  return {
    async execute({ tools, input, signal }): Promise<ExecutionResult> {
      const outcomes: Record<string, ToolOutcome> = {};
      for (const tool of tools) {
        if (signal?.aborted) throw new Error('the run was cancelled');
        const started = Date.now();
        let outcome: ToolOutcome;
        try {
          const result = await runTool(tool, input, config);
          outcome = { type: tool.type, ok: true, result, durationMs: Date.now() - started };
        } catch (err) {
          outcome = { type: tool.type, ok: false, error: (err as Error).message, durationMs: Date.now() - started };
        }
        outcomes[keyFor(tool.name, outcomes)] = outcome;
      }
      const entries = Object.entries(outcomes);
      const succeeded = entries.filter(([, o]) => o.ok).length;
      const output: RunOutput = {
        input,
        tools: outcomes,
        summary: entries.length === 0 ? 'no enabled tools' : `${succeeded} of ${entries.length} tools succeeded`,
      };
      if (entries.length > 0 && succeeded === 0) {
        const reasons = entries.map(([name, o]) => `${name}: ${o.ok ? '' : o.error}`).join('; ');
        return { output, error: `every tool failed (${reasons})`.slice(0, 2000) };
      }
      return { output, error: null };
    },
  };
}
