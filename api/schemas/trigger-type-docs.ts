import { z } from 'zod';
import { eventFilterInputShape } from '../../lib/event-filter';
import { agentEventConfigInput, eventConfigInput, scheduleConfigInput, webhookConfigInput, type TriggerType } from './trigger-configs';

/**
 * What the OpenAPI document shows of each trigger type: its config as JSON Schema can state it, and an
 * example body that creates one and one that updates it.
 */

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
export const UPDATE_EXAMPLES: Record<TriggerType, Record<string, unknown>> = {
  schedule: { configJson: { cronExpression: '@every 30m' } },
  cron: { configJson: { timezone: 'America/New_York' } },
  webhook: { configJson: { secretToken: null } },
  event: { configJson: { eventFilter: { 'payload.action': 'closed' } } },
  agent_finished: { name: 'After any successful run', configJson: { eventType: 'agent.completed' } },
  agent_output: { enabled: false },
};
