import { z } from 'zod';
import { maxJsonBytes, timestamp } from './common';

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;

const json = z.unknown();

export const createRunBody = z
  .strictObject({
    input: maxJsonBytes(json, 65_536)
      .optional()
      .describe('Any JSON value (at most 64 KiB), handed to the executor; custom tools fill their bodyTemplate from it. Default null'),
  })
  // No body at all reaches validation as null.
  .nullish()
  .meta({ id: 'CreateRun', description: 'Optional; no body or an empty object runs with input null.' });
export type CreateRunInput = z.infer<typeof createRunBody>;

export const runSchema = z
  .object({
    id: z.uuid(),
    accountId: z.uuid(),
    agentId: z.uuid(),
    triggerId: z.uuid().nullable().describe('The trigger whose fire started the run; null for a run started through the API'),
    fireId: z.uuid().nullable().describe('That fire (see the trigger\'s fires); null for a run started through the API'),
    status: z.enum(RUN_STATUSES),
    input: json.describe('The input: as sent, or for a triggered run { source, triggerId, fireId, payload } (payload: the event data, hook body, …)'),
    output: json.describe(
      'Set when the run finished. Default executor: { input, tools: { "<tool name>": { type, ok, result | error, durationMs } }, summary }; ' +
        'a repeated tool name is keyed "<name> (2)". agent_output triggers filter on it, e.g. { "tools.prices.result.bitcoin.usd": 1 }',
    ),
    error: z.string().nullable().describe('Why the run failed (every tool failed, or the executor failed)'),
    chainDepth: z.number().int().describe('0 for a run started directly; +1 per chained agent_finished / agent_output trigger (at most 10)'),
    startedAt: timestamp.nullable(),
    finishedAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Run' });
