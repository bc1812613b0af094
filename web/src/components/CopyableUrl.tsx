import { Group, Text } from '@mantine/core';
import { CopyValue } from './ShownOnce';

/** A URL a person is to hand on (a hook's, an incoming webhook's): what it is for, the URL whole, and a copy button. */
export function CopyableUrl({ label, url, copyLabel }: { label: string; url: string; copyLabel: string }) {
  return (
    <div>
      <Text size="sm" fw={500}>
        {label}
      </Text>
      <Group gap="xs" wrap="nowrap">
        <Text size="sm" ff="monospace" style={{ wordBreak: 'break-all' }}>
          {url}
        </Text>
        <CopyValue value={url} label={copyLabel} />
      </Group>
    </div>
  );
}
