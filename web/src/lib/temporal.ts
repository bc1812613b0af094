/** Workflow ids derived from rows (docs/architecture.md): what the Temporal UI shows each object as. */
export const workflowIds = {
  run: (runId: string) => `run:${runId}`,
  delivery: (deliveryId: string) => `delivery:${deliveryId}`,
  event: (eventId: string) => `event:${eventId}`,
  schedule: (triggerId: string) => `trigger:${triggerId}`,
  recovery: (recoveryId: string) => `recovery:${recoveryId}`,
};

export interface TemporalSettings {
  uiUrl: string | null;
  namespace: string;
}

/** The Temporal UI page of a workflow (all its runs), or null when no UI is configured. */
export function workflowUrl(settings: TemporalSettings | undefined, workflowId: string): string | null {
  if (!settings?.uiUrl) return null;
  return `${settings.uiUrl}/namespaces/${encodeURIComponent(settings.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** The Temporal UI page of a schedule (a cron or schedule trigger's `trigger:<id>`). */
export function scheduleUrl(settings: TemporalSettings | undefined, triggerId: string): string | null {
  if (!settings?.uiUrl) return null;
  return `${settings.uiUrl}/namespaces/${encodeURIComponent(settings.namespace)}/schedules/${encodeURIComponent(workflowIds.schedule(triggerId))}`;
}
