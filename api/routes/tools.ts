import { createToolBody, toolSchema, updateToolBody } from '../schemas/tools';
import type { ToolService } from '../services/tool-service';
import type { App } from '../types';
import { agentChildRoutes } from './agent-children';

export function toolRoutes(app: App, deps: { tools: ToolService; publicBaseUrl: string }): void {
  agentChildRoutes(app, {
    collection: 'tools',
    noun: 'tool',
    schemas: { item: toolSchema, create: createToolBody, update: updateToolBody },
    service: deps.tools,
    publicBaseUrl: deps.publicBaseUrl,
    createDescription:
      'Creates a tool of the agent (dex_pairs, prediction_markets, coin_prices or custom; configJson per type); its runs call ' +
      "the enabled tools in created order. A custom tool's endpoint must be a public address unless ALLOW_PRIVATE_TARGETS; " +
      'its secret headers (every header but Content-Type, Accept, Accept-Language, User-Agent) are stored encrypted and shown in full in this response only.',
    quota: 'The agent already has its quota of tools (QUOTA_TOOLS_PER_AGENT, default 50)',
    checksUrls: true,
  });
}
