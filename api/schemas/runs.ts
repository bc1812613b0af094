import { z } from 'zod';
import { listQuery, maxJsonBytes, timestamp } from './common';

export const RUN_STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed'] as const;

const json = z.unknown();

/** A conversation's id, chosen by the caller: it appears in a path, so it is kept to URL-safe characters. */
export const threadId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:@-]+$/, 'must be 1–200 characters among A–Z a–z 0–9 . _ : @ -')
  .describe('A conversation of the agent, chosen by the caller (e.g. a user or chat id): 1–200 of A–Z a–z 0–9 . _ : @ -');

export const createRunBody = z
  .strictObject({
    input: maxJsonBytes(json, 65_536)
      .optional()
      .describe(
        'Any JSON value (at most 64 KiB), handed to the executor. With a language model it is the user\'s message (a string as it ' +
          'is, other JSON as its text); with the tool executor custom tools fill their bodyTemplate from it. Default null',
      ),
    threadId: threadId
      .optional()
      .describe(
        'Runs of the agent with the same threadId share a conversation: the model sees the thread\'s newest messages ' +
          '(memoryConfig.maxMessages, younger than memoryConfig.ttlMinutes), and a succeeded run adds its input and answer to it',
      ),
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
      'Set when the run finished. Model executor: { text, steps: [{ index, type, name, ok, error?, durationMs }], usage: { promptTokens, ' +
        'completionTokens } } (text: the model\'s last answer; agent_output triggers filter on it, e.g. { "text": { "$contains": "buy" } }). ' +
        'Tool executor: { input, tools: { "<tool name>": { type, ok, result | error, durationMs } }, summary }; ' +
        'a repeated tool name is keyed "<name> (2)"; filters read e.g. { "tools.prices.result.bitcoin.usd": 1 }. ' +
        'At most 256 KiB of JSON: beyond that the largest values are replaced by { truncated: true, bytes } (a model run\'s text is cut) until it fits',
    ),
    error: z
      .string()
      .nullable()
      .describe(
        'Why the run failed: the model provider refused or stayed unavailable (its message), maxSteps reached, every tool failed ' +
          '(tool executor), "timed out" (RUN_TIMEOUT_MS), its agent was paused or made a template while it was queued, or the engine could not execute it',
      ),
    chainDepth: z.number().int().describe('0 for a run started directly; +1 per chained agent_finished / agent_output trigger (at most 10)'),
    threadId: z.string().nullable().describe('The conversation the run belongs to; null when it has none'),
    executor: z
      .enum(['tools', 'model'])
      .nullable()
      .describe(
        'Who made the run, decided when it starts running: model (a language model calling the tools; MODEL_BASE_URL is set and a ' +
          'model is named by configJson.model or MODEL_NAME) or tools (each enabled tool once, in order); null while queued',
      ),
    usage: z
      .object({
        promptTokens: z.number().int().describe('Prompt tokens of its model calls, as the provider counted them'),
        completionTokens: z.number().int().describe('Completion tokens of its model calls'),
        toolCalls: z.number().int().describe('Tool steps it made (a model run: one per function the model called; the tool executor: one per tool)'),
      })
      .describe(
        'What the run has used so far, counted as each step is recorded (so also while it runs, and for a failed run); its tokens count ' +
          "toward the account's MODEL_TOKENS_PER_DAY and GET /api/account/usage",
      ),
    rerunOf: z
      .object({
        runId: z.uuid().describe('The run it reruns'),
        fromStep: z.int().min(0).describe('The step it went on from: the steps before it were copied from that run'),
      })
      .nullable()
      .describe('A rerun (POST /api/runs/:id/rerun, or a replay): the run it reruns and the step it went on from; null for any other run, and once that run was deleted (RETENTION_DAYS)'),
    startedAt: timestamp.nullable(),
    finishedAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Run' });

/** GET /api/runs/:id: the run with its latest reruns. */
export const runDetailSchema = runSchema
  .extend({
    reruns: z
      .array(z.object({ runId: z.uuid(), fromStep: z.int().min(0), createdAt: timestamp }))
      .describe('Its reruns, newest first, at most 20 (each a run of its own: GET /api/runs/:runId)'),
  })
  .meta({ id: 'RunDetail' });

export const RUN_STEP_TYPES = ['tool', 'model', 'approval'] as const;

export const runStepSchema = z
  .object({
    index: z.number().int().describe('Position in the run, from 0: the order the steps are made in'),
    type: z
      .enum(RUN_STEP_TYPES)
      .describe("tool: a call of one of the agent's tools; model: a call of the language model; approval: a tool call waiting for (or given) a person's decision (docs/api.md § Approvals)"),
    copied: z
      .boolean()
      .describe('True for a step of a rerun copied from the run it reruns (a step before its fromStep): recorded there, not made again; its usage is not counted again'),
    approvalId: z.uuid().nullable().describe('An approval step: its approval (GET /api/approvals/:id); null for other steps'),
    name: z
      .string()
      .describe(
        'A model step: the model. A tool step: the function the model called (model executor), or the key of its outcome in the run ' +
          'output (tool executor: the tool\'s name; "<name> (2)" when repeated)',
      ),
    toolId: z.uuid().nullable().describe('The tool a tool step calls (it may have been deleted since); null for model steps and for a function the model made up'),
    input: json.describe(
      "The step's own input. The first model step: the run's context { model, temperature, maxSteps, messages (the system message, the " +
        "thread's remembered messages that fit MODEL_CONTEXT_MAX_BYTES, the user's message), tools (the functions offered: name, toolId, " +
        'toolType, description, parameters), remembered (how many of messages are the thread\'s) }; ' +
        'later model steps: null (they continue the conversation). A tool step of a model run: { callId, arguments } as the model gave them; ' +
        "of the tool executor: null (it takes the run's input)",
    ),
    output: json.describe(
      'What the step returned: a model step its answer { content, toolCalls: [{ id, name, arguments }], finishReason }, a tool step its ' +
        'result; at most 256 KiB of JSON, else { truncated: true, bytes }; null until it finished or when it failed',
    ),
    error: z
      .string()
      .nullable()
      .describe(
        'Why the step failed: the provider refused the model call or stayed unavailable (its message, never the key); the tool answered ' +
          'non-2xx, timed out, was refused, or the model\'s arguments did not match its parameters',
      ),
    usage: json.describe('Tokens a model step used: { promptTokens, completionTokens }; null for tool steps'),
    startedAt: timestamp.nullable().describe('When its call started; null until then'),
    finishedAt: timestamp.nullable().describe('When its call returned and was recorded; a step that finished is never made again'),
  })
  .meta({ id: 'RunStep' });

export const threadParams = z.object({ id: z.uuid(), threadId });

export const threadMessageSchema = z
  .object({
    id: z.uuid(),
    agentId: z.uuid(),
    threadId: z.string(),
    runId: z.uuid().nullable().describe('The run that added it (its id stays after the run itself is deleted by retention)'),
    role: z.enum(['user', 'assistant']).describe("user: a run's input; assistant: the model's answer"),
    content: z.string(),
    createdAt: timestamp.describe("When it was said: a user message when its run was created, an answer when its run finished"),
  })
  .meta({ id: 'ThreadMessage' });

export const runEventsHeaders = z.looseObject({
  'last-event-id': z
    .string()
    .regex(/^\d{1,9}$/, 'must be the id of a step event (a step index)')
    .optional()
    .describe('Resumes a stream: the id of the last event received (a step index); the stream starts with the steps after it'),
});

/** An SSE event's `data`: a JSON text of the component `id` (the schema of what it holds is an annotation of the string). */
const sseData = (id: string, what: string) =>
  z.string().meta({ contentMediaType: 'application/json', contentSchema: { $ref: `#/components/schemas/${id}` }, description: `${what}, as JSON` });

/**
 * One event of GET /api/runs/:id/events, as an SSE client reads it: `event`, `data`, and `id` (which lasts from
 * the event that set it until another does, so `done` carries the last step's). A `text/event-stream` response's
 * schema describes each event (OpenAPI 3.1 has no keyword for the items of a stream; 3.2's itemSchema is this).
 * Comment lines (`: heartbeat`) and the opening `retry:` are no events.
 */
export const runEventStream = z
  .discriminatedUnion('event', [
    z
      .strictObject({
        event: z.literal('step'),
        id: z.string().regex(/^\d+$/).describe("The step's index: send it back as Last-Event-ID to resume after it"),
        data: sseData('RunStep', 'The step, once it finished (as in GET /api/runs/{id}/steps)'),
        retry: z.int().min(0).optional(),
      })
      .meta({ title: 'step', description: 'A step of the run once it finished, one event per step, in index order' }),
    z
      .strictObject({
        event: z.literal('delta'),
        id: z.string().regex(/^\d+$/).optional().describe("The last step event's id, when there was one (a delta sets none)"),
        data: z.string().meta({
          contentMediaType: 'application/json',
          contentSchema: {
            type: 'object',
            required: ['stepIndex', 'offset', 'text'],
            additionalProperties: false,
            properties: {
              stepIndex: { type: 'integer', minimum: 0, description: 'The model step whose text this is (its step event comes after its deltas)' },
              offset: { type: 'integer', minimum: 0, description: "Where `text` starts in the step's text (UTF-16 code units): above 0 in the first delta of a stream that joined mid-step" },
              text: { type: 'string', description: 'The next piece of the text, as the model wrote it' },
            },
          },
          description: '`{ stepIndex, offset, text }`, as JSON',
        }),
        retry: z.int().min(0).optional(),
      })
      .meta({
        title: 'delta',
        description:
          "A model step's text as it arrives, before the step itself: not stored, so a stream opened mid-step gets only what comes after it (each delta continues the one before; the step then holds the whole text)",
      }),
    z
      .strictObject({
        event: z.literal('waiting'),
        id: z.string().regex(/^\d+$/).optional().describe("The last step event's id, when there was one (a waiting event sets none)"),
        data: sseData('Approval', 'The approval the run waits for (as in GET /api/approvals/{id}), pending'),
        retry: z.int().min(0).optional(),
      })
      .meta({
        title: 'waiting',
        description:
          "The run waits for a person's decision on a tool call (status waiting): one event per pending approval, also on a stream opened while the run waits; once it is decided the run goes on and so does the stream",
      }),
    z
      .strictObject({
        event: z.literal('done'),
        id: z.string().regex(/^\d+$/).optional().describe("The last step event's id, when there was one (an SSE id lasts until replaced)"),
        data: sseData('Run', 'The run, finished (status succeeded or failed)'),
        retry: z.int().min(0).optional(),
      })
      .meta({ title: 'done', description: 'The last event: the run has ended, and the stream ends with it' }),
  ])
  .meta({
    id: 'RunEvent',
    description:
      'One event of the stream, as an EventSource reads it (event, id, data). The stream opens with a comment and `retry: 2000`, ' +
      'sends `event: step` per finished step in index order (a model step\'s text first in `event: delta`s as it arrives), `event: waiting` with the approval while the run waits for a decision, then `event: done`, and ends; a `: heartbeat` comment line comes ' +
      'while nothing happens.',
  });

/** GET /api/runs: the account's runs across agents, narrowed by agent and status. */
export const runListQuery = listQuery.extend({
  agentId: z.uuid().optional().describe('Only the runs of this agent'),
  status: z.enum(RUN_STATUSES).optional().describe('Only runs in this status'),
});
