import { z } from 'zod';
import { canonicalTimeZone, cronExpressionProblem, MAX_CRON_EXPRESSION_LENGTH, timeZoneProblem } from '../../lib/cron';
import { DAY_MS, DURATION_SHAPE, tryParseDuration } from '../../lib/durations';
import { eventFilterSchema } from '../../lib/event-filter';
import { EVENT_TYPES } from '../../lib/events';

/**
 * The trigger types and the rules of each type's configJson, as a write checks them (the service, with
 * parseWith(…, 'body.configJson')): its cron expression, time zone, catch-up window, hook path and token,
 * event type and filter.
 */

export const TRIGGER_TYPES = ['schedule', 'cron', 'webhook', 'event', 'agent_finished', 'agent_output'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];
export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'] as const;

export const WEBHOOK_PATH = /^[a-z0-9][a-z0-9_-]{2,99}$/;
/** Sent back in the X-Trigger-Token header, so printable ASCII without spaces. */
const SECRET_TOKEN = /^[\x21-\x7e]+$/;

const MIN_CATCHUP_MS = 10_000;

/** parseDuration's reason for a catch-up window the pattern refused (the same words as without it). */
const durationProblem = (value: string) => {
  const parsed = tryParseDuration(value);
  return 'error' in parsed ? parsed.error : 'is not a duration';
};
const MAX_CATCHUP_MS = 365 * DAY_MS;

/**
 * The shape of an accepted cron expression as a JSON Schema pattern can say it (the document's `pattern`): a macro,
 * `@every` and a duration, or 5 fields (6 with seconds first) of digits, `*`, `,`, `/` and `-`, month and day-of-week
 * also names; never empty. What no pattern can say (ranges, which names, a restricted day-of-month with a restricted
 * day-of-week) is the validation's, in words. Spaces and tabs only, and ASCII digits: what JavaScript and the
 * fuzzer's Python read alike (their `\s` and `\d` differ).
 */
const FIELD = '[0-9*,/-]+';
const NAMED_FIELD = '[0-9A-Za-z*,/-]+';
export const CRON_EXPRESSION_SHAPE = new RegExp(
  '^[ \\t]*(?:@(?:yearly|annually|monthly|weekly|daily|midnight|hourly)|@every[ \\t]+(?:[0-9]{1,15}(?:ms|d|h|m|s))+|' +
    `(?:${FIELD}[ \\t]+)?${FIELD}[ \\t]+${FIELD}[ \\t]+${FIELD}[ \\t]+${NAMED_FIELD}[ \\t]+${NAMED_FIELD})[ \\t]*$`,
);

export const cronExpression = z
  .string()
  .trim()
  .max(MAX_CRON_EXPRESSION_LENGTH)
  // One message for any refusal, the most precise one (cronExpressionProblem's); `abort` keeps it single.
  .regex(CRON_EXPRESSION_SHAPE, { error: (issue) => cronExpressionProblem(String(issue.input)) ?? 'is not a cron expression', abort: true })
  .superRefine((value, ctx) => {
    const problem = cronExpressionProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .describe(
    '5 fields (6 with seconds first), @yearly … @hourly, or @every <duration> (1s–365d). Refused: a year field, L W # ? H, ' +
      'and restricting both day-of-month and day-of-week',
  );

export const timezone = z
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
  .regex(DURATION_SHAPE, { error: (issue) => durationProblem(String(issue.input)), abort: true })
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

export const eventType = z.enum(EVENT_TYPES).describe('The event type that fires the trigger');

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
