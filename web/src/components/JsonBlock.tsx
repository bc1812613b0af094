import { Code, Text } from '@mantine/core';

/**
 * A value shown as text (a string as it is, anything else as indented JSON), scrolling when long; it can be
 * focused, so a keyboard can scroll it too.
 */
export function JsonBlock({ label, value, maxHeight = 240 }: { label: string; value: unknown; maxHeight?: number }) {
  if (value === undefined) return null;
  return (
    <div>
      <Text size="xs" fw={600} c="dimmed">
        {label}
      </Text>
      <Code block tabIndex={0} aria-label={label} style={{ maxHeight, overflow: 'auto' }}>
        {typeof value === 'string' ? value : JSON.stringify(value, null, 2)}
      </Code>
    </div>
  );
}
