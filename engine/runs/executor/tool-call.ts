import type { ToolRow } from '../../../db/repositories/tools';
import type { Config } from '../../../lib/config';
import { runCustomTool, type CustomToolConfig } from './custom-tool';
import { coinPrices, dexPairs, predictionMarkets } from './data-tools';
import { callMcpTool } from './mcp-tool';
import type { McpToolConfig } from '../../../lib/mcp/functions';

/**
 * Makes one tool step's call: the tool (secrets opened) with its input. Resolves with the result;
 * rejects with a message fit to record (non-2xx, timeout, refused target, bad config) or, when
 * `signal` aborts, as soon as the request is torn down.
 */
export function callTool(tool: ToolRow, input: unknown, config: Config, signal?: AbortSignal): Promise<unknown> {
  const c = tool.config_json as never;
  const tools = { ...config.tools, dnsServers: config.network.dnsServers };
  switch (tool.type) {
    case 'custom':
      return runCustomTool(c as CustomToolConfig, input, {
        timeoutMs: config.tools.timeoutMs, allowPrivate: config.webhooks.allowPrivateTargets, dnsServers: config.network.dnsServers, signal,
      });
    case 'coin_prices':
      return coinPrices(c, tools, signal);
    case 'dex_pairs':
      return dexPairs(c, tools, signal);
    case 'prediction_markets':
      return predictionMarkets(c, tools, signal);
    case 'mcp':
      return callMcpTool(c as McpToolConfig, input, {
        timeoutMs: config.tools.timeoutMs, allowPrivate: config.webhooks.allowPrivateTargets, dnsServers: config.network.dnsServers, accountId: null, signal,
      });
  }
}
