import { SegmentedControl, Stack, Text } from '@mantine/core';
import { useId } from 'react';
import { PERMISSIONS, type PermissionKey } from './team-labels';

export type Override = 'role' | 'allow' | 'deny';
export type Choices = Record<PermissionKey, Override>;

/** Per permission: as the role gives it, or allowed, or denied whatever the role (a member's custom booleans). */
export function PermissionChoices({ value, onChange }: { value: Choices; onChange: (next: Choices) => void }) {
  const id = useId();
  return (
    <>
      {PERMISSIONS.map((p) => (
        <Stack key={p.key} gap={2}>
          <Text size="sm" fw={500} id={`${id}-${p.key}`}>
            {p.label}{' '}
            <Text span size="xs" c="dimmed">
              ({p.what})
            </Text>
          </Text>
          <SegmentedControl
            aria-labelledby={`${id}-${p.key}`}
            size="xs"
            data={[
              { value: 'role', label: 'As the role' },
              { value: 'allow', label: 'Allow' },
              { value: 'deny', label: 'Deny' },
            ]}
            value={value[p.key]}
            onChange={(v) => onChange({ ...value, [p.key]: v as Override })}
          />
        </Stack>
      ))}
    </>
  );
}
