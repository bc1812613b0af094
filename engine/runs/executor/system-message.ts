import type { AgentRow } from '../../../db/repositories/agents';

/**
 * The system message a model run starts with, composed from the agent's fields: the
 * systemPrompt as written, then a section for each of persona, goal, voice and policies that is set
 * (a string policy as written, an object policy as its JSON). Null when every field is empty.
 */
export function composeSystemMessage(agent: Pick<AgentRow, 'system_prompt' | 'persona' | 'goal' | 'voice' | 'policies'>): string | null {
  const parts: string[] = [];
  if (agent.system_prompt.trim()) parts.push(agent.system_prompt.trim());
  if (agent.persona.trim()) parts.push(`## Persona\n${agent.persona.trim()}`);
  if (agent.goal.trim()) parts.push(`## Goal\n${agent.goal.trim()}`);
  if (agent.voice.trim()) parts.push(`## Voice\n${agent.voice.trim()}`);
  const policies = agent.policies
    .map((p) => (typeof p === 'string' ? p.trim() : JSON.stringify(p)))
    .filter((p) => p !== '');
  if (policies.length > 0) parts.push(`## Policies\n${policies.map((p) => `- ${p}`).join('\n')}`);
  return parts.length > 0 ? parts.join('\n\n') : null;
}

/** The run's input as the user's message: a string as it is, any other JSON as its text; none for null. */
export function userMessage(input: unknown): string | null {
  if (input === null || input === undefined) return null;
  return typeof input === 'string' ? input : JSON.stringify(input);
}
