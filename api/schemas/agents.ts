import { z } from 'zod';
import { modelSettingsShape } from '../../lib/model-settings';
import { jsonObject, listQuery, maxJsonBytes, timestamp } from './common';

export const AGENT_STATUSES = ['draft', 'active', 'paused', 'template'] as const;
export const MEMORY_TYPES = ['conversation', 'summary', 'vector', 'none'] as const;

export const DEFAULT_MEMORY_CONFIG = { type: 'conversation', maxMessages: 50, ttlMinutes: 1440 } as const;

const memoryConfig = z.strictObject({
  type: z.enum(MEMORY_TYPES),
  maxMessages: z.int().min(1).max(10_000),
  ttlMinutes: z.int().min(1).max(525_600),
});

/** Free-form, except the model settings a run with a language model reads (checked here, 400 naming the field). */
const agentConfigJson = z
  .looseObject(modelSettingsShape)
  .describe('Any JSON object. The keys model, temperature and maxSteps configure runs with a language model (see Agent runs)');

const policy = z.union([z.string().max(10_000), jsonObject]);

export const graphSchema = z
  .strictObject({
    // Rules between items, which no JSON Schema keyword states, are stated in words (the fuzzer's hook accepts them).
    nodes: z
      .array(z.strictObject({ id: z.string().min(1).max(200), type: z.string().min(1).max(100), data: jsonObject.optional() }))
      .max(1000)
      .describe('Node ids are unique within the graph: 400 `body.graph.nodes.1.id: duplicate node id "x"` otherwise'),
    edges: z
      .array(z.strictObject({ id: z.string().min(1).max(200).optional(), source: z.string().min(1).max(200), target: z.string().min(1).max(200) }))
      .max(5000)
      .describe(
        "An edge's source and target name nodes of the same graph: 400 `body.graph.edges.0.source: names missing node \"x\"` " +
          'otherwise (`body.edges.…` when the graph is the body, `body.agent.graph.…` in an import)',
      ),
  })
  .superRefine((graph, ctx) => {
    const ids = new Set<string>();
    graph.nodes.forEach((node, i) => {
      if (ids.has(node.id)) ctx.addIssue({ code: 'custom', path: ['nodes', i, 'id'], message: `duplicate node id "${node.id}"` });
      ids.add(node.id);
    });
    graph.edges.forEach((edge, i) => {
      for (const end of ['source', 'target'] as const) {
        if (!ids.has(edge[end])) ctx.addIssue({ code: 'custom', path: ['edges', i, end], message: `names missing node "${edge[end]}"` });
      }
    });
  })
  .meta({ id: 'AgentGraph' });

const writable = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000),
  goal: z.string().max(10_000),
  persona: z.string().max(10_000),
  voice: z.string().max(200),
  systemPrompt: z.string().max(100_000),
  policies: maxJsonBytes(z.array(policy).max(100), 65_536),
  memoryConfig: memoryConfig.partial().describe('Missing keys keep their current (or default) value'),
  configJson: maxJsonBytes(agentConfigJson, 65_536),
  status: z.enum(AGENT_STATUSES),
};

export const createAgentBody = z
  .strictObject({
    ...writable,
    description: writable.description.optional(),
    goal: writable.goal.optional(),
    persona: writable.persona.optional(),
    voice: writable.voice.optional(),
    systemPrompt: writable.systemPrompt.optional(),
    policies: writable.policies.optional(),
    memoryConfig: writable.memoryConfig.optional(),
    configJson: writable.configJson.optional(),
    status: writable.status.optional(),
    graph: graphSchema.optional(),
  })
  .meta({ id: 'CreateAgent' });
export type CreateAgentInput = z.infer<typeof createAgentBody>;

export const updateAgentBody = z.strictObject(writable).partial().meta({ id: 'UpdateAgent' });
export type UpdateAgentInput = z.infer<typeof updateAgentBody>;

export const agentSchema = z
  .object({
    id: z.uuid(),
    accountId: z.uuid(),
    name: z.string(),
    description: z.string(),
    goal: z.string(),
    persona: z.string(),
    voice: z.string(),
    systemPrompt: z.string(),
    policies: z.array(policy),
    memoryConfig,
    configJson: jsonObject,
    status: z.enum(AGENT_STATUSES),
    graph: graphSchema,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Agent' });

/** GET /api/agents: the page, narrowed by a text in the name or description and by status. */
export const agentListQuery = listQuery.extend({
  q: z.string().trim().min(1).max(200).optional().describe('Only agents whose name or description contains this text (any case)'),
  status: z.enum(AGENT_STATUSES).optional().describe('Only agents with this status'),
});
