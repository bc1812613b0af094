import { z } from 'zod';
import { canonicalTimeZone, cronExpressionProblem, MAX_CRON_EXPRESSION_LENGTH, timeZoneProblem } from '../../lib/cron';
import { DAY_MS, tryParseDuration } from '../../lib/durations';
import { eventFilterInputShape, eventFilterSchema, eventFilterShape } from '../../lib/event-filter';
import { EVENT_TYPES } from '../../lib/events';
import { EXPECTED_FIRE_STATUSES } from '../../lib/expected-fires';
import { jsonObject, maxJsonBytes, timestamp } from './common';
import { documentedAs, typedUpdateDocumentation } from './documentation';

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
  })
  .describe(
    '5 fields (6 with seconds first), @yearly … @hourly, or @every <duration> (1s–365d). Refused: a year field, L W # ? H, ' +
      'and restricting both day-of-month and day-of-week',
  );

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
  .default('1h')
  .describe('How late a fire missed while Temporal was down may still run (10s–365d; 90s, 10m, 1h30m, 2d)');

/** schedule and cron triggers. */
export const scheduleConfigInput = z.strictObject({
  cronExpression,
  timezone,
  overlapPolicy: z
    .enum(OVERLAP_POLICIES)
    .default('skip')
    .describe("Temporal's policy for a fire due while the previous fire workflow still runs (a fire only records itself and queues the run)"),
  catchupWindow,
});

/** webhook triggers; the service generates whichever of the two is absent. */
export const webhookConfigInput = z.strictObject({
  webhookPath: z
    .string()
    .regex(WEBHOOK_PATH, 'must be 3–100 characters of lower-case letters, digits, _ and -, starting with a letter or digit')
    .optional()
    .describe('The hook is POST /api/hooks/triggers/{webhookPath}; unique across all accounts (409 when taken); 24 hex characters generated when absent'),
  secretToken: z
    .string()
    .min(16)
    .max(256)
    .regex(SECRET_TOKEN, 'must be printable ASCII without spaces')
    .optional()
    .describe('What callers send in X-Trigger-Token; 32 random bytes (base64url) generated when absent. A secret: shown in full only in the response that set it'),
});

const eventType = z.enum(EVENT_TYPES).describe('The event type that fires the trigger');

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

// What validates: configJson is checked per type by the service (configSchemaFor), so that an update's
// merge patch can be checked once merged, and errors name body.configJson.<field>.
const createBody = z.strictObject({ ...writable, configJson: writable.configJson.optional(), enabled: writable.enabled.optional() });
const updateBody = z.strictObject(writable).partial();
const createUserBody = createBody.extend({ agentId: agentIdField.optional() });
const updateUserBody = updateBody.extend({ agentId: agentIdField.optional() });

// What the OpenAPI document shows (documentation.ts): the same bodies as a union on type, each type with
// its config schema and a working example.

/** An eventFilter as JSON Schema can say it (eventFilterSchema checks paths, sizes and patterns in code). */
const documentedEventFilter = eventFilterInputShape.describe(
  'Up to 20 keys: dotted paths into the event\'s data (agent_output: into the run\'s output); each value is a JSON scalar that must ' +
    'be equal, or { "$contains": "…" }, or { "$regex": "…" } (RE2, ≤ 200 characters). A missing path never matches.',
);

const documentedConfigs = {
  // timezone without its transform (the canonical spelling): zod's JSON Schema leaves out the examples of
  // anything holding a transform, since they might be its output.
  schedule: scheduleConfigInput
    .extend({ timezone: z.string().default('UTC').describe('IANA time zone the expression is read in; stored in the spelling Temporal looks up (utc → UTC)') })
    .meta({ id: 'ScheduleTriggerConfig', description: 'schedule and cron triggers' }),
  webhook: webhookConfigInput.meta({ id: 'WebhookTriggerConfig', description: 'webhook triggers' }),
  event: eventConfigInput.extend({ eventFilter: documentedEventFilter.default({}) }).meta({ id: 'EventTriggerConfig', description: 'event triggers' }),
  agentEvent: agentEventConfigInput
    .extend({ eventFilter: documentedEventFilter.default({}) })
    .meta({ id: 'AgentEventTriggerConfig', description: 'agent_finished and agent_output triggers' }),
};

/** Per type: its documented config, whether a create needs one, and an example body that creates one. */
export const TRIGGER_TYPE_DOCS = {
  schedule: {
    config: documentedConfigs.schedule,
    required: true,
    example: { type: 'schedule', name: 'Hourly digest', configJson: { cronExpression: '@every 1h' } },
  },
  cron: {
    config: documentedConfigs.schedule,
    required: true,
    example: {
      type: 'cron', name: 'Weekday standup', configJson: { cronExpression: '0 9 * * 1-5', timezone: 'Europe/Paris', overlapPolicy: 'skip', catchupWindow: '10m' },
    },
  },
  webhook: {
    config: documentedConfigs.webhook,
    required: false,
    // No webhookPath: it is unique across accounts, so an example that names one works once.
    example: { type: 'webhook', name: 'From the CRM', configJson: {} },
  },
  event: {
    config: documentedConfigs.event,
    required: true,
    example: { type: 'event', name: 'New pull request', configJson: { eventType: 'webhook.received', eventFilter: { 'payload.action': 'opened' } } },
  },
  agent_finished: {
    config: documentedConfigs.agentEvent,
    required: false,
    example: { type: 'agent_finished', name: 'After any failed run', configJson: { eventType: 'agent.failed' } },
  },
  agent_output: {
    config: documentedConfigs.agentEvent,
    required: false,
    example: { type: 'agent_output', name: 'Price alert', configJson: { eventFilter: { 'tools.prices.result.bitcoin.usd': { $regex: '^1[0-9]{5}' } } } },
  },
} satisfies Record<TriggerType, { config: z.ZodObject; required: boolean; example: { type: TriggerType } & Record<string, unknown> }>;

/** An update's example per type: one field or two, merged onto the current config. */
const UPDATE_EXAMPLES: Record<TriggerType, Record<string, unknown>> = {
  schedule: { configJson: { cronExpression: '@every 30m' } },
  cron: { configJson: { timezone: 'America/New_York' } },
  webhook: { configJson: { secretToken: null } },
  event: { configJson: { eventFilter: { 'payload.action': 'closed' } } },
  agent_finished: { name: 'After any successful run', configJson: { eventType: 'agent.completed' } },
  agent_output: { enabled: false },
};

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

// ---- schedule truth: expected fires and the preview (README § Operating it) ----

const instant = z.iso.datetime({ offset: true });

export const expectedFiresQuery = z.object({
  from: instant.optional().describe('ISO 8601 instant; default: 24 h before `to`. At most RETENTION_DAYS (30) days ago'),
  to: instant.optional().describe('ISO 8601 instant, exclusive; default and at most: now (later times: see …/preview)'),
  limit: z.coerce.number().int().min(1).max(1000).default(1000).describe('Page size, 1–1000'),
  cursor: z.string().max(200).optional().describe("Opaque cursor from the previous page's Link header"),
});

export const expectedFireSchema = z
  .object({
    scheduledAt: timestamp.describe('When the trigger should have fired (UTC)'),
    localTime: z.string().describe("The same time on the wall clock of the trigger's time zone, with its offset (2027-03-28T03:30:00+02:00)"),
    status: z
      .enum(EXPECTED_FIRE_STATUSES)
      .describe(
        'fired / throttled: a fire was recorded for this time, as such. paused: it was skipped because the agent was paused or a template. ' +
          'disabled: the trigger was disabled (its schedule paused). before-created: before the trigger existed. overlap-skipped: the fire before ' +
          'it was still running and the overlap policy starts nothing meanwhile. catchup-skipped: the schedule could not run until this time\'s ' +
          'catch-up window had closed. pending: no fire yet, but its catch-up window (+ MISSED_FIRE_GRACE_MS) is still open. missed: none of these ' +
          '(it also emitted trigger.missed once).',
      ),
    fireId: z.uuid().nullable().describe('The fire recorded for this time (GET …/fires/:fireId)'),
    runId: z.uuid().nullable().describe('The run it started (linked triggers)'),
    firedAt: timestamp.nullable().describe('When that fire was recorded'),
    lagMs: z.number().int().nullable().describe('firedAt − scheduledAt, in ms'),
  })
  .meta({ id: 'ExpectedFire' });

export const previewQuery = z.object({
  n: z.coerce.number().int().min(1).max(100).default(10).describe('How many times, 1–100'),
});

export const previewTimeSchema = z
  .object({
    at: timestamp.describe('When it will fire (UTC)'),
    localTime: z.string().describe("On the wall clock of the trigger's time zone, with its offset"),
  })
  .meta({ id: 'PreviewTime' });

export const schedulePreviewQuery = z.object({
  cronExpression: cronExpression.describe('As a trigger\'s configJson.cronExpression'),
  timezone: timezone.describe('IANA time zone the expression is read in (default UTC)'),
  n: previewQuery.shape.n,
});
