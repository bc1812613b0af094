import { createToolBody, toolSchema, updateToolBody } from '../schemas/tools';
import type { ToolService } from '../services/tool-service';
import type { App } from '../types';
import { agentChildRoutes } from './agent-children';

export function toolRoutes(app: App, deps: { tools: ToolService; publicBaseUrl: string }): void {
  agentChildRoutes(app, {
    collection: 'tools',
    schemas: { item: toolSchema, create: createToolBody, update: updateToolBody },
    service: deps.tools,
    publicBaseUrl: deps.publicBaseUrl,
    createDescription:
      "Creates a tool. A custom tool's endpoint must be a public address unless ALLOW_PRIVATE_TARGETS; its secret headers are shown in full in this response only. " +
      '403 when the agent already has its quota of tools (QUOTA_TOOLS_PER_AGENT, default 50).',
  });
}
