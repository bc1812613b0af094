import { z } from 'zod';
import { canonicalTimeZone, cronExpressionProblem, MAX_CRON_EXPRESSION_LENGTH, timeZoneProblem } from '../../lib/cron';
import { DAY_MS, tryParseDuration } from '../../lib/durations';
import { eventFilterSchema, eventFilterShape } from '../../lib/event-filter';
import { EVENT_TYPES } from '../../lib/events';
import { jsonObject, maxJsonBytes, timestamp } from './common';

export const TRIGGER_TYPES = ['schedule', 'cron', 'webhook', 'event', 'agent_finished', 'agent_output'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];
export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'] as const;

export const WEBHOOK_PATH = /^[a-z0-9][a-z0-9_-]{2,99}$/;
/** Sent back in the X-Trigger-Token header, so printable ASCII without spaces. */
const SECRET_TOKEN = /^[\x21-\x7e]+$/;

const MIN_CATCHUP_MS = 10_000;
const MAX_CATCHUP_MS = 365 * DAY_MS;

// ---- configJson per type (validated in the service with parseWith(…, 'body.configJson')) ----

const cronExpression = z
  .string()
  .trim()
  .max(MAX_CRON_EXPRESSION_LENGTH)
  .superRefine((value, ctx) => {
    const problem = cronExpressionProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const timezone = z
  .string()
  .transform((value, ctx) => {
    const zone = canonicalTimeZone(value);
    if (zone === null) {
      ctx.addIssue({ code: 'custom', message: timeZoneProblem(value)! });
      return z.NEVER;
    }
    return zone;
  })
  .default('UTC');

const catchupWindow = z
  .string()
  .superRefine((value, ctx) => {
    const parsed = tryParseDuration(value);
    if ('error' in parsed) ctx.addIssue({ code: 'custom', message: parsed.error });
    else if (parsed.ms < MIN_CATCHUP_MS) ctx.addIssue({ code: 'custom', message: 'must be at least 10s' });
    else if (parsed.ms > MAX_CATCHUP_MS) ctx.addIssue({ code: 'custom', message: 'must be at most 365d' });
  })
  .default('1h');

/** schedule and cron triggers. */
export const scheduleConfigInput = z.strictObject({
  cronExpression,
  timezone,
  overlapPolicy: z.enum(OVERLAP_POLICIES).default('skip'),
  catchupWindow,
});

/** webhook triggers; the service generates whichever of the two is absent. */
export const webhookConfigInput = z.strictObject({
  webhookPath: z
    .string()
    .regex(WEBHOOK_PATH, 'must be 3–100 characters of lower-case letters, digits, _ and -, starting with a letter or digit')
    .optional(),
  secretToken: z.string().min(16).max(256).regex(SECRET_TOKEN, 'must be printable ASCII without spaces').optional(),
});

const eventType = z.enum(EVENT_TYPES);

/** event triggers: eventType is required. */
export const eventConfigInput = z.strictObject({ eventType, eventFilter: eventFilterSchema.default({}) });

/** agent_finished and agent_output triggers: eventType defaults to agent.completed. */
export const agentEventConfigInput = z.strictObject({
  eventType: eventType.default('agent.completed'),
  eventFilter: eventFilterSchema.default({}),
});

export function configSchemaFor(type: TriggerType) {
  switch (type) {
    case 'schedule':
    case 'cron':
      return scheduleConfigInput;
    case 'webhook':
      return webhookConfigInput;
    case 'event':
      return eventConfigInput;
    case 'agent_finished':
    case 'agent_output':
      return agentEventConfigInput;
  }
}

// ---- request bodies ----

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

export const createTriggerBody = z
  .strictObject({ ...writable, configJson: writable.configJson.optional(), enabled: writable.enabled.optional() })
  .meta({ id: 'CreateTrigger' });

export const updateTriggerBody = z.strictObject(writable).partial().meta({ id: 'UpdateTrigger' });

export const createUserTriggerBody = z
  .strictObject({
    ...writable,
    configJson: writable.configJson.optional(),
    enabled: writable.enabled.optional(),
    agentId: agentIdField.optional(),
  })
  .meta({ id: 'CreateUserTrigger' });

export const updateUserTriggerBody = z
  .strictObject({ ...writable, agentId: agentIdField })
  .partial()
  .meta({ id: 'UpdateUserTrigger' });

/** What the service takes; the agent-trigger bodies are the same without agentId. */
export type CreateTriggerInput = z.infer<typeof createUserTriggerBody>;
export type UpdateTriggerInput = z.infer<typeof updateUserTriggerBody>;

// ---- params and responses ----


const scheduleConfig = z
  .object({
    cronExpression: z.string(),
    timezone: z.string(),
    overlapPolicy: z.enum(OVERLAP_POLICIES),
    catchupWindow: z.string(),
  })
  .meta({ id: 'TriggerScheduleConfig', description: 'schedule and cron triggers' });

const webhookConfig = z
  .object({
    webhookPath: z.string(),
    secretToken: z.string().describe('Shown in full only in the response to the request that set or generated it; masked ("••••" + last 4) after'),
  })
  .meta({ id: 'TriggerWebhookConfig', description: 'webhook triggers' });

const eventConfig = z
  .object({ eventType, eventFilter: eventFilterShape })
  .meta({ id: 'TriggerEventConfig', description: 'event, agent_finished and agent_output triggers' });

/** A stored config, as responses show it (secrets masked); it passed configSchemaFor(type) when written. */
export const triggerConfigSchema = z.union([scheduleConfig, webhookConfig, eventConfig]);
export type TriggerConfig = z.infer<typeof triggerConfigSchema>;

export const triggerSchema = z
  .object({
    id: z.uuid(),
    accountId: z.uuid(),
    agentId: z.uuid().nullable(),
    type: z.enum(TRIGGER_TYPES),
    name: z.string(),
    configJson: triggerConfigSchema,
    enabled: z.boolean(),
    fireCount: z.int(),
    lastFired: timestamp.nullable(),
    nextFireAt: timestamp.nullable().describe('Next scheduled fire of an enabled schedule/cron trigger; null otherwise'),
    hookUrl: z.string().nullable().describe('Where a webhook trigger is fired (POST with X-Trigger-Token); null for other types'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Trigger' });
