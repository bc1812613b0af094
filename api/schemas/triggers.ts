import { z } from 'zod';
import { eventFilterShape } from '../../lib/event-filter';
import { timestamp } from './common';
import { eventType, OVERLAP_POLICIES, TRIGGER_TYPES } from './trigger-configs';

/** A trigger as responses show it. Its config rules: trigger-configs.ts; the bodies that write one: trigger-bodies.ts. */

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
