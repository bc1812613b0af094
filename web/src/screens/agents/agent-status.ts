import type { Schemas } from '../../api/client';

export type AgentStatus = Schemas['Agent']['status'];
export const AGENT_STATUSES: readonly AgentStatus[] = ['draft', 'active', 'paused', 'template'];
export const STATUS_COLORS: Record<AgentStatus, string> = { draft: 'gray', active: 'teal', paused: 'orange', template: 'violet' };
