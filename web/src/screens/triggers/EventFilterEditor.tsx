import { ActionIcon, Button, Group, NativeSelect, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';

type FilterValue = string | number | boolean | null | { $contains: string } | { $regex: string };
export type EventFilter = Record<string, FilterValue>;

type Op = 'is' | 'json' | 'contains' | 'matches';
interface Row {
  path: string;
  op: Op;
  value: string;
}

const OPS: Array<{ value: Op; label: string }> = [
  { value: 'is', label: 'is the text' },
  { value: 'json', label: 'is the value (number, true, false, null)' },
  { value: 'contains', label: 'contains' },
  { value: 'matches', label: 'matches the pattern (RE2)' },
];

function rowsOf(filter: EventFilter): Row[] {
  return Object.entries(filter).map(([path, value]) => {
    if (value !== null && typeof value === 'object') {
      return '$contains' in value ? { path, op: 'contains', value: value.$contains } : { path, op: 'matches', value: value.$regex };
    }
    return typeof value === 'string' ? { path, op: 'is', value } : { path, op: 'json', value: JSON.stringify(value) };
  });
}

function valueOf(row: Row): FilterValue {
  switch (row.op) {
    case 'is':
      return row.value;
    case 'contains':
      return { $contains: row.value };
    case 'matches':
      return { $regex: row.value };
    case 'json':
      try {
        const parsed: unknown = JSON.parse(row.value);
        return typeof parsed === 'object' && parsed !== null ? row.value : (parsed as FilterValue);
      } catch {
        return row.value;
      }
  }
}

export function filterOf(rows: Row[]): EventFilter {
  return Object.fromEntries(rows.filter((r) => r.path.trim() !== '').map((r) => [r.path.trim(), valueOf(r)]));
}

/**
 * An eventFilter as rows a person reads: a dotted path into the event's data, how it must compare, and the
 * value. The API's schema (propertyNames, at most 20 keys, pattern lengths) checks the result before
 * sending; its 400 names the key it refuses (a pattern RE2 cannot compile), shown under the rows.
 */
export function EventFilterEditor({ value, onChange, error, pathHint }: { value: EventFilter; onChange: (next: EventFilter) => void; error?: string; pathHint: string }) {
  const [rows, setRows] = useState<Row[]>(() => rowsOf(value));
  const update = (next: Row[]) => {
    setRows(next);
    onChange(filterOf(next));
  };
  const set = (i: number, patch: Partial<Row>) => update(rows.map((row, j) => (j === i ? { ...row, ...patch } : row)));
  return (
    <Stack gap={6}>
      <Text size="sm" fw={500}>
        Event filter
      </Text>
      <Text size="xs" c="dimmed">
        Every condition must hold. {pathHint} A path that is missing never matches. No condition: every event of the type fires it.
      </Text>
      {rows.map((row, i) => (
        <Group key={i} gap="xs" wrap="nowrap" align="flex-start">
          <TextInput aria-label={`Condition ${i + 1} path`} placeholder="payload.action" value={row.path} onChange={(e) => set(i, { path: e.currentTarget.value })} styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }} style={{ flex: 1 }} />
          <NativeSelect aria-label={`Condition ${i + 1} comparison`} data={OPS} value={row.op} onChange={(e) => set(i, { op: e.currentTarget.value as Op })} />
          <TextInput aria-label={`Condition ${i + 1} value`} placeholder="opened" value={row.value} onChange={(e) => set(i, { value: e.currentTarget.value })} style={{ flex: 1 }} />
          <ActionIcon variant="subtle" color="red" mt={4} aria-label={`Remove condition ${i + 1}`} onClick={() => update(rows.filter((_, j) => j !== i))}>
            <span aria-hidden="true">✕</span>
          </ActionIcon>
        </Group>
      ))}
      <Group>
        <Button size="xs" variant="subtle" onClick={() => update([...rows, { path: '', op: 'is', value: '' }])}>
          Add condition
        </Button>
      </Group>
      {error && (
        <Text size="xs" c="red.9">
          {error}
        </Text>
      )}
    </Stack>
  );
}
