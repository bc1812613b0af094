import { z } from 'zod';
import { DAY_MS, DURATION_SHAPE, tryParseDuration } from './durations';

/**
 * An agent's model settings, in its `configJson`: which model it thinks with, at which
 * temperature, and how many model calls a run may make. Shared by the API, which refuses invalid values
 * on write (400 naming the field), and the model executor, which reads them when a run starts (an agent
 * stored before these rules is refused there, with the same message).
 */
export const DEFAULT_MAX_STEPS = 8;

const APPROVAL_TIMEOUT_PROBLEM = 'must be a duration from 1m to 30d (e.g. "2h", "7d")';
/** A duration between spaces or tabs, which the field trims (the document's pattern). */
const TRIMMED_DURATION_SHAPE = new RegExp(`^[ \\t]*${DURATION_SHAPE.source.slice(1, -1)}[ \\t]*$`);

export const modelSettingsShape = {
  model: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('The model this agent thinks with (e.g. "gpt-4o-mini", "llama3.1"); default MODEL_NAME. When the deployment sets MODEL_ALLOWED, one of those (400 otherwise)'),
  temperature: z.number().min(0).max(2).optional().describe("Sampling temperature, 0–2; default the provider's"),
  maxSteps: z
    .int()
    .min(1)
    .max(50)
    .optional()
    .describe(`Most model calls one run makes, 1–50 (default ${DEFAULT_MAX_STEPS}); the last is asked to answer without tools`),
  approvalTimeout: z
    .string()
    .trim()
    .regex(TRIMMED_DURATION_SHAPE, { message: APPROVAL_TIMEOUT_PROBLEM, abort: true })
    .refine((text) => {
      const parsed = tryParseDuration(text);
      return 'ms' in parsed && parsed.ms >= 60_000 && parsed.ms <= 30 * DAY_MS;
    }, APPROVAL_TIMEOUT_PROBLEM)
    .optional()
    .describe('How long a run waits for a decision on a tool call that requires approval, 1m–30d (default APPROVAL_TIMEOUT); then the approval expires'),
};

/** The agent's approval timeout in ms (configJson.approvalTimeout), or null when it sets none (or an invalid one). */
export function approvalTimeoutOf(configJson: unknown): number | null {
  const text = (configJson as { approvalTimeout?: unknown } | null)?.approvalTimeout;
  if (typeof text !== 'string') return null;
  const parsed = tryParseDuration(text.trim());
  return 'ms' in parsed && parsed.ms >= 60_000 && parsed.ms <= 30 * DAY_MS ? parsed.ms : null;
}

const modelSettings = z.looseObject(modelSettingsShape);

export interface ModelSettings {
  /** Null when neither the agent nor MODEL_NAME names one. */
  model: string | null;
  temperature: number | null;
  maxSteps: number;
}

/** The agent's settings with defaults filled; throws naming the field (`configJson.temperature: …`) when one is invalid. */
export function modelSettingsOf(configJson: unknown, defaultModel: string | null): ModelSettings {
  const parsed = modelSettings.safeParse(configJson ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`configJson.${issue.path.map(String).join('.')}: ${issue.message}`);
  }
  return { model: parsed.data.model ?? defaultModel, temperature: parsed.data.temperature ?? null, maxSteps: parsed.data.maxSteps ?? DEFAULT_MAX_STEPS };
}

/** What decides whether an agent's runs use the model (lib/config.ts `model`). */
export interface ModelDeployment {
  baseUrl: string | null;
  name: string | null;
}

/**
 * Whether a run of an agent with this configJson uses the language model: the deployment has a provider
 * (MODEL_BASE_URL) and a model is named for the agent (its configJson.model, else MODEL_NAME). The worker
 * decides each run's executor by it; the API and the fire recorder apply the model budget by it.
 */
export function runsWithModel(configJson: unknown, deployment: ModelDeployment): boolean {
  if (!deployment.baseUrl) return false;
  const named = (configJson as { model?: unknown } | null)?.model;
  return isNamedModel(named) || deployment.name !== null;
}

const isNamedModel = (named: unknown): named is string => typeof named === 'string' && named.trim() !== '';

/**
 * Why `model` (an agent's configJson.model) may not be used under MODEL_ALLOWED, or null when it may
 * (MODEL_ALLOWED unset, the model among it, or no model named).
 */
export function modelNotAllowed(model: unknown, allowed: readonly string[] | null): string | null {
  if (!allowed || !isNamedModel(model)) return null;
  const name = model.trim();
  return allowed.includes(name) ? null : `"${name.slice(0, 200)}" is not an allowed model (allowed: ${allowed.join(', ')})`;
}

/** The model budget: whether an account that spent `tokensToday` today may start a model call or run. */
export function overModelBudget(tokensToday: number, tokensPerDay: number): boolean {
  return tokensToday >= tokensPerDay;
}

/** Seconds from `now` to the next UTC midnight (when today's model budget starts afresh), at least 1. */
export function secondsToNextUtcDay(now: Date = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** The message of a run refused or stopped by MODEL_TOKENS_PER_DAY. */
export function modelBudgetMessage(tokensPerDay: number): string {
  return `MODEL_TOKENS_PER_DAY reached: this account has used its ${tokensPerDay} model tokens (prompt + completion) for today (UTC)`;
}
