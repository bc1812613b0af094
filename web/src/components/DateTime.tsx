import { Tooltip } from '@mantine/core';
import { formatDateTime, formatRelative, viewerTimeZone } from '../lib/dates';

/** A timestamp in the viewer's time zone; the exact UTC instant on hover and for machines (<time dateTime>). */
export function DateTime({ value, relative = false }: { value: string | null | undefined; relative?: boolean }) {
  if (!value) return <span>—</span>;
  const text = relative ? formatRelative(value) : formatDateTime(value);
  return (
    <Tooltip label={`${formatDateTime(value)} (${viewerTimeZone}) · ${value}`} openDelay={300}>
      <time dateTime={value}>{text}</time>
    </Tooltip>
  );
}
