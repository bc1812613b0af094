import { z } from 'zod';

/**
 * An agent's model settings, in its `configJson`: which model it thinks with, at which
 * temperature, and how many model calls a run may make. Shared by the API, which refuses invalid values
 * on write (400 naming the field), and the model executor, which reads them when a run starts (an agent
 * stored before these rules is refused there, with the same message).
 */
export const DEFAULT_MAX_STEPS = 8;

export const modelSettingsShape = {
  model: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('The model this agent thinks with (e.g. "gpt-4o-mini", "llama3.1"); default MODEL_NAME'),
  temperature: z.number().min(0).max(2).optional().describe("Sampling temperature, 0–2; default the provider's"),
  maxSteps: z
    .int()
    .min(1)
    .max(50)
    .optional()
    .describe(`Most model calls one run makes, 1–50 (default ${DEFAULT_MAX_STEPS}); the last is asked to answer without tools`),
};

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
