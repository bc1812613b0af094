import { z } from 'zod';

export const settingsSchema = z
  .object({
    agentCreateCost: z.int().min(0).describe('Units charged for creating a non-template agent (AGENT_CREATE_COST), and for moving one out of template'),
    temporal: z
      .object({
        namespace: z.string().describe('The Temporal namespace of every workflow and schedule'),
        uiUrl: z.string().nullable().describe('Base URL of the Temporal UI that shows them (TEMPORAL_UI_URL); null when none is configured'),
      })
      .describe(
        'Where a workflow-backed object is seen in Temporal: {uiUrl}/namespaces/{namespace}/workflows/{workflowId} for run:<runId>, ' +
          'delivery:<deliveryId>, event:<eventId>, fire:<triggerId>:<fireKey>; {uiUrl}/namespaces/{namespace}/schedules/trigger:<triggerId> for a schedule',
      ),
  })
  .meta({ id: 'Settings' });

export type Settings = z.infer<typeof settingsSchema>;
