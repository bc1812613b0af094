import { z } from 'zod';
import { agentSchema, createAgentBody } from './agents';
import { jsonObject, maxJsonBytes } from './common';
import { CONNECTOR_TYPES, connectorConfigSchemas, connectorSchema } from './connectors';
import { documentedAs } from './documentation';
import { TOOL_TYPES, toolConfigSchemas, toolSchema } from './tools';
import { TRIGGER_TYPES } from './trigger-configs';
import { TRIGGER_TYPE_DOCS } from './trigger-type-docs';
import { triggerSchema } from './triggers';

/**
 * An agent moved between accounts (GET /api/agents/:id/export, POST /api/agents/import): the agent, its
 * tools, connectors and agent triggers as their create bodies would say them, without ids, account ids,
 * counters or secrets. Where a secret was, the item's `secrets` says so; an import needs each filled in.
 */

const secrets = z
  .array(z.string().min(1).max(300))
  .max(100)
  .describe(
    'Where in configJson the export left a secret out (botToken, signingSecret, headers.Authorization): an import needs each of ' +
      'them filled in, in full, as a non-empty string: 400 naming every one that is missing (`body.connectors.0.configJson.botToken: ' +
      'is a secret the export left out; fill in each in full`), a relation between two fields that no JSON Schema keyword states',
  );

const name = z.string().trim().min(1).max(200);
const enabled = z.boolean().describe('Default true');

export const agentExportSchema = z
  .object({
    version: z.literal(1),
    agent: agentSchema.omit({ id: true, accountId: true, createdAt: true, updatedAt: true }),
    tools: z.array(
      z.object({ type: z.enum(TOOL_TYPES), name: z.string(), description: z.string(), configJson: jsonObject, enabled: z.boolean(), requiresApproval: z.boolean(), secrets }),
    ),
    connectors: z.array(z.object({ type: z.enum(CONNECTOR_TYPES), name: z.string(), configJson: jsonObject, enabled: z.boolean(), secrets })),
    triggers: z.array(
      z.object({
        type: z.enum(TRIGGER_TYPES),
        name: z.string(),
        configJson: jsonObject.describe('Without webhookPath and secretToken: an import generates new ones'),
        enabled: z.boolean(),
      }),
    ),
  })
  .meta({ id: 'AgentExport' });
export type AgentExport = z.infer<typeof agentExportSchema>;

// The body's shape; configJson is checked per type by the import, like a create's, with errors naming
// body.tools.0.configJson.…, so the document shows importAgentDocumentation instead.
const importAgentShape = z
  .strictObject({
    version: z.literal(1).describe('The export format: 1'),
    agent: createAgentBody,
    tools: z
      .array(
        z.strictObject({
          type: z.enum(TOOL_TYPES),
          name,
          description: z.string().max(2000).optional(),
          configJson: maxJsonBytes(jsonObject, 131_072),
          enabled: enabled.optional(),
          requiresApproval: z.boolean().optional().describe("Default false: a model run's call of the tool waits for a person's decision first (docs/api.md § Approvals)"),
          secrets: secrets.optional(),
        }),
      )
      .max(1000)
      .default([]),
    connectors: z
      .array(
        z.strictObject({
          type: z.enum(CONNECTOR_TYPES),
          name,
          configJson: maxJsonBytes(jsonObject, 65_536),
          enabled: enabled.optional(),
          secrets: secrets.optional(),
        }),
      )
      .max(1000)
      .default([]),
    triggers: z
      .array(
        z.strictObject({
          type: z.enum(TRIGGER_TYPES),
          name,
          configJson: maxJsonBytes(jsonObject, 16_384).optional(),
          enabled: enabled.optional(),
          secrets: secrets.optional(),
        }),
      )
      .max(1000)
      .default([]),
  });

/** A union on `type` of one variant per type (each titled by it), for the document. */
function byType<T extends string>(types: readonly T[], variant: (type: T) => z.ZodObject) {
  const variants = types.map((type) => variant(type).meta({ title: type }));
  return z.discriminatedUnion('type', variants as [(typeof variants)[number], ...typeof variants]);
}

/**
 * How the document shows an import: each child as a union on `type` with that type's config, the very schemas its
 * create validates with (the import checks each child's config like its create, after the body's shape).
 */
const importAgentDocumentation = z
  .strictObject({
    version: z.literal(1).describe('The export format: 1'),
    agent: createAgentBody,
    tools: z
      .array(
        byType(TOOL_TYPES, (type) =>
          z.strictObject({
            type: z.literal(type),
            name,
            description: z.string().max(2000).optional(),
            configJson: toolConfigSchemas[type],
            enabled: enabled.optional(),
            secrets: secrets.optional(),
          }),
        ),
      )
      .max(1000)
      .optional()
      .describe('Default []'),
    connectors: z
      .array(
        byType(CONNECTOR_TYPES, (type) =>
          z.strictObject({ type: z.literal(type), name, configJson: connectorConfigSchemas[type], enabled: enabled.optional(), secrets: secrets.optional() }),
        ),
      )
      .max(1000)
      .optional()
      .describe('Default []'),
    triggers: z
      .array(
        byType(TRIGGER_TYPES, (type) => {
          const { config, required } = TRIGGER_TYPE_DOCS[type];
          return z.strictObject({ type: z.literal(type), name, configJson: required ? config : config.optional(), enabled: enabled.optional(), secrets: secrets.optional() });
        }),
      )
      .max(1000)
      .optional()
      .describe('Default []'),
  })
  .meta({ id: 'ImportAgent', description: 'An export (GET /api/agents/{id}/export) with its secrets filled in' });

export const importAgentBody = documentedAs(importAgentShape, importAgentDocumentation);
export type ImportAgentInput = z.infer<typeof importAgentBody>;

export const importedAgentSchema = z
  .object({ agent: agentSchema, tools: z.array(toolSchema), connectors: z.array(connectorSchema), triggers: z.array(triggerSchema) })
  .meta({ id: 'ImportedAgent' });
