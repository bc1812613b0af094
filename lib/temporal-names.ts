/** Task queue and workflow-id formats live here and nowhere else (DESIGN §1). */
export const TASK_QUEUE = 'agent-platform';

export const SEARCH_ATTRIBUTES = ['AccountId', 'AgentId', 'TriggerId'] as const;

export const workflowIds = {
  triggerSchedule: (triggerId: string) => `trigger:${triggerId}`,
  event: (eventId: string) => `event:${eventId}`,
  delivery: (deliveryId: string) => `delivery:${deliveryId}`,
  run: (runId: string) => `run:${runId}`,
  fire: (triggerId: string, fireKey: string) => `fire:${triggerId}:${fireKey}`,
  healthProbe: (probeId: string) => `health-probe:${probeId}`,
};
