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
        'a repeated tool name is keyed "<name> (2)". agent_output triggers filter on it, e.g. { "tools.prices.result.bitcoin.usd": 1 }. ' +
        'At most 256 KiB of JSON: beyond that the largest of input and the tool results are replaced by { truncated: true, bytes } until it fits',
    ),
    error: z
      .string()
      .nullable()
      .describe('Why the run failed: every tool failed, "timed out" (RUN_TIMEOUT_MS), its agent was paused or made a template while it was queued, or the engine could not execute it'),
    chainDepth: z.number().int().describe('0 for a run started directly; +1 per chained agent_finished / agent_output trigger (at most 10)'),
    startedAt: timestamp.nullable(),
    finishedAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Run' });

export const RUN_STEP_TYPES = ['tool', 'model'] as const;

export const runStepSchema = z
  .object({
    index: z.number().int().describe('Position in the run, from 0: the order the steps are made in'),
    type: z.enum(RUN_STEP_TYPES).describe('tool: a call of one of the agent\'s tools; model: a language-model call (not made yet by this version)'),
    name: z.string().describe('A tool step: the key of its outcome in the run output (the tool\'s name; "<name> (2)" when repeated)'),
    toolId: z.uuid().nullable().describe('The tool a tool step calls (it may have been deleted since)'),
    input: json.describe("The step's own arguments; null when it takes the run's input (every tool step of the default executor)"),
    output: json.describe('What the step returned (a tool step: its result); at most 256 KiB of JSON, else { truncated: true, bytes }; null until it finished or when it failed'),
    error: z.string().nullable().describe('Why the step failed (the tool answered non-2xx, timed out, was refused, …)'),
    usage: json.describe('Tokens a model step used; null for tool steps'),
    startedAt: timestamp.nullable().describe('When its call started; null until then'),
    finishedAt: timestamp.nullable().describe('When its call returned and was recorded; a step that finished is never made again'),
  })
  .meta({ id: 'RunStep' });
