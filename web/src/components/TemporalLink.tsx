import { Anchor } from '@mantine/core';
import { useSettings } from '../session/account';
import { scheduleUrl, workflowUrl } from '../lib/temporal';

/**
 * "Open in Temporal" for a workflow-backed object (a run, a delivery, an event's fan-out, a trigger's
 * schedule). Nothing when the deployment has no Temporal UI configured (TEMPORAL_UI_URL).
 */
export function TemporalLink({ workflowId, scheduleOf, children = 'Open in Temporal' }: { workflowId?: string; scheduleOf?: string; children?: string }) {
  const { data: settings } = useSettings();
  const href = scheduleOf ? scheduleUrl(settings?.temporal, scheduleOf) : workflowId ? workflowUrl(settings?.temporal, workflowId) : null;
  if (!href) return null;
  return (
    <Anchor href={href} target="_blank" rel="noreferrer" size="sm">
      {children} <span aria-hidden="true">↗</span>
    </Anchor>
  );
}
