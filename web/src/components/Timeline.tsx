import { Button, Collapse, Group, List, Paper, type ListProps } from '@mantine/core';
import { useState, type ReactNode } from 'react';

/** A timeline's entries (a trigger's fires, a webhook's deliveries): a list named for screen readers, each entry the full width. */
export function TimelineItems({ label, children, ...list }: Omit<ListProps, 'aria-label'> & { label: string; children: ReactNode }) {
  return (
    <List aria-label={label} listStyleType="none" styles={{ itemWrapper: { width: '100%' }, itemLabel: { width: '100%' } }} {...list}>
      {children}
    </List>
  );
}

/**
 * One entry of a timeline: its line (`summary` on the left, `actions` and the button that opens it on the
 * right), a note under it, and, opened, its details — fetched only while open (`details` is called then).
 * The button says what it opens ("Details", "Attempts") and, to a screen reader, which entry (`toggleLabel`).
 */
export function TimelineEntry({
  summary,
  actions,
  note,
  opens,
  toggleLabel,
  initiallyOpen = false,
  details,
}: {
  summary: ReactNode;
  actions?: ReactNode;
  note?: ReactNode;
  /** The button's words: `closed` to open it, `open` to close it. */
  opens: { closed: string; open: string };
  toggleLabel: (open: boolean) => string;
  initiallyOpen?: boolean;
  details: () => ReactNode;
}) {
  const [open, setOpen] = useState(initiallyOpen);
  return (
    <List.Item>
      <Paper withBorder p="sm" radius="md" shadow={open ? 'sm' : undefined}>
        <Group justify="space-between" wrap="wrap" gap="xs">
          <Group gap="sm" wrap="wrap">
            {summary}
          </Group>
          <Group gap="sm">
            {actions}
            <Button size="compact-sm" variant="subtle" onClick={() => setOpen((o) => !o)} aria-expanded={open} aria-label={toggleLabel(open)}>
              {open ? opens.open : opens.closed}
            </Button>
          </Group>
        </Group>
        {note}
        <Collapse in={open}>{open && details()}</Collapse>
      </Paper>
    </List.Item>
  );
}
