import { Badge } from '@mantine/core';

/** Whether a trigger or webhook is on: teal when enabled; gray when disabled, or `offColor` (red: the platform turned it off). */
export function EnabledBadge({ enabled, offColor = 'gray' }: { enabled: boolean; offColor?: string }) {
  return (
    <Badge variant="light" color={enabled ? 'teal' : offColor}>
      {enabled ? 'enabled' : 'disabled'}
    </Badge>
  );
}
