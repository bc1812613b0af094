import { z } from 'zod';
import { jsonObject, maxJsonBytes } from './common';
import { documentedAs, typedUpdateDocumentation } from './documentation';
import { TRIGGER_TYPES } from './trigger-configs';
import { TRIGGER_TYPE_DOCS, UPDATE_EXAMPLES } from './trigger-type-docs';

/** The bodies that create and update a trigger (agent and user triggers): what validates, and what the OpenAPI document shows. */

const configJsonField = maxJsonBytes(jsonObject, 16_384).describe(
  'Depends on type. schedule/cron: { cronExpression, timezone = "UTC", overlapPolicy = "skip", catchupWindow = "1h" }. ' +
    'webhook: { webhookPath?, secretToken? } (generated when absent). event: { eventType, eventFilter = {} }. ' +
    'agent_finished/agent_output: { eventType = "agent.completed", eventFilter = {} }. ' +
    'In an update it is a JSON merge patch (RFC 7386) onto the current config, unless type changes; then it replaces it.',
);

const writable = {
  type: z.enum(TRIGGER_TYPES),
  name: z.string().trim().min(1).max(200),
  configJson: configJsonField,
  enabled: z.boolean(),
};

const agentIdField = z.uuid().nullable().describe('Links the trigger to an agent of your account; null for none');

// What validates: configJson is checked per type by the service (configSchemaFor), so that an update's
// merge patch can be checked once merged, and errors name body.configJson.<field>.
const createBody = z.strictObject({ ...writable, configJson: writable.configJson.optional(), enabled: writable.enabled.optional() });
const updateBody = z.strictObject(writable).partial();
const createUserBody = createBody.extend({ agentId: agentIdField.optional() });
const updateUserBody = updateBody.extend({ agentId: agentIdField.optional() });

// What the OpenAPI document shows (documentation.ts): the same bodies as a union on type, each type with
// its config schema and a working example (trigger-type-docs.ts).

function documentedTriggerBodies(extra: z.ZodRawShape) {
  const { name, enabled } = writable;
  const create = TRIGGER_TYPES.map((type) => {
    const { config, required, example } = TRIGGER_TYPE_DOCS[type];
    return z
      .strictObject({ type: z.literal(type), name, configJson: required ? config : config.optional(), enabled: enabled.optional(), ...extra })
      .meta({ title: type, examples: [example] });
  });
  return {
    create: z.discriminatedUnion('type', create as [(typeof create)[number], ...typeof create]),
    update: typedUpdateDocumentation({
      types: TRIGGER_TYPES,
      configOf: (type) => TRIGGER_TYPE_DOCS[type].config,
      fields: { name: name.optional(), enabled: enabled.optional(), ...extra },
      examples: UPDATE_EXAMPLES,
      sameTypeExample: { name: 'Renamed', enabled: true },
    }),
  };
}

const agentTriggerDocs = documentedTriggerBodies({});
const userTriggerDocs = documentedTriggerBodies({ agentId: agentIdField.optional() });

const CREATE_DESCRIPTION = 'A trigger of one type, with that type\'s config (configJson: at most 16 KiB serialized)';

export const createTriggerBody = documentedAs(createBody, agentTriggerDocs.create.meta({ id: 'CreateTrigger', description: CREATE_DESCRIPTION }));
export const updateTriggerBody = documentedAs(
  updateBody,
  agentTriggerDocs.update.meta({ id: 'UpdateTrigger', description: 'Any subset of the writable fields; with type, configJson follows it' }),
);
export const createUserTriggerBody = documentedAs(
  createUserBody,
  userTriggerDocs.create.meta({ id: 'CreateUserTrigger', description: CREATE_DESCRIPTION }),
);
export const updateUserTriggerBody = documentedAs(
  updateUserBody,
  userTriggerDocs.update.meta({ id: 'UpdateUserTrigger', description: 'Any subset of the writable fields; with type, configJson follows it' }),
);

/** What the service takes; the agent-trigger bodies are the same without agentId. */
export type CreateTriggerInput = z.infer<typeof createUserTriggerBody>;
export type UpdateTriggerInput = z.infer<typeof updateUserTriggerBody>;
