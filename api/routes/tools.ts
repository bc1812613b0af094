import { createQuotasRepository } from '../../db/repositories/quotas';
import { createToolsRepository } from '../../db/repositories/tools';
import type { ResourceContext } from '../context';
import { createToolBody, toolSchema, updateToolBody } from '../schemas/tools';
import { createToolService } from '../services/tool-service';
import type { App } from '../types';
import { agentChildRoutes } from './agent-children';

export function toolRoutes(app: App, ctx: ResourceContext): void {
  agentChildRoutes(app, {
    collection: 'tools',
    schemas: { item: toolSchema, create: createToolBody, update: updateToolBody },
    service: createToolService({
      db: ctx.db,
      agents: ctx.agents,
      tools: createToolsRepository(ctx.db),
      secrets: ctx.secrets,
      allowPrivateTargets: ctx.config.webhooks.allowPrivateTargets,
      quotas: createQuotasRepository(ctx.db),
      quota: ctx.config.quotas.toolsPerAgent,
    }),
    publicBaseUrl: ctx.publicBaseUrl,
    createDescription:
      "Creates a tool. A custom tool's endpoint must be a public address unless ALLOW_PRIVATE_TARGETS; its secret headers are shown in full in this response only. " +
      '403 when the agent already has its quota of tools (QUOTA_TOOLS_PER_AGENT, default 50).',
  });
}
