import { ActionIcon, Button, Group, JsonInput, Stack, Text, Textarea } from '@mantine/core';

/** One policy as edited: a sentence, or a structured policy written as a JSON object. */
export type PolicyRow = { kind: 'text'; text: string } | { kind: 'json'; text: string };

export function toRows(policies: unknown[]): PolicyRow[] {
  return policies.map((p) => (typeof p === 'string' ? { kind: 'text', text: p } : { kind: 'json', text: JSON.stringify(p, null, 2) }));
}

/** The rows as the API takes them, or the number (1-based) of a structured policy that is not a JSON object. */
export function fromRows(rows: PolicyRow[]): { policies: unknown[] } | { invalid: number } {
  const policies: unknown[] = [];
  for (const [i, row] of rows.entries()) {
    if (row.kind === 'text') {
      if (row.text.trim()) policies.push(row.text);
      continue;
    }
    try {
      const value: unknown = JSON.parse(row.text);
      if (!value || typeof value !== 'object' || Array.isArray(value)) return { invalid: i + 1 };
      policies.push(value);
    } catch {
      return { invalid: i + 1 };
    }
  }
  return { policies };
}

/** The agent's policies: each a sentence or a JSON object, added, edited and removed in place. */
export function PoliciesEditor({ rows, onChange, readOnly, error }: { rows: PolicyRow[]; onChange: (rows: PolicyRow[]) => void; readOnly: boolean; error?: string }) {
  const set = (i: number, text: string) => onChange(rows.map((row, j) => (j === i ? { ...row, text } : row)));
  return (
    <Stack gap="xs">
      <div>
        <Text size="sm" fw={500}>
          Policies
        </Text>
        <Text size="xs" c="dimmed">
          Rules the agent follows, added to its system message: a sentence each, or a structured policy as a JSON object (at most 100).
        </Text>
      </div>
      {rows.length === 0 && (
        <Text size="sm" c="dimmed">
          No policies.
        </Text>
      )}
      {rows.map((row, i) => (
        <Group key={i} align="flex-start" wrap="nowrap">
          {row.kind === 'text' ? (
            <Textarea style={{ flex: 1 }} aria-label={`Policy ${i + 1}`} autosize minRows={1} value={row.text} readOnly={readOnly} onChange={(e) => set(i, e.currentTarget.value)} />
          ) : (
            <JsonInput style={{ flex: 1 }} aria-label={`Policy ${i + 1} (JSON)`} autosize minRows={2} value={row.text} readOnly={readOnly} onChange={(text) => set(i, text)} validationError="Not a JSON object" />
          )}
          {!readOnly && (
            <ActionIcon variant="subtle" color="red" mt={6} aria-label={`Remove policy ${i + 1}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
              <span aria-hidden="true">✕</span>
            </ActionIcon>
          )}
        </Group>
      ))}
      {error && (
        <Text size="xs" c="red" role="alert">
          {error}
        </Text>
      )}
      {!readOnly && rows.length < 100 && (
        <Group gap="xs">
          <Button size="xs" variant="light" onClick={() => onChange([...rows, { kind: 'text', text: '' }])}>
            Add policy
          </Button>
          <Button size="xs" variant="subtle" onClick={() => onChange([...rows, { kind: 'json', text: '{\n  \n}' }])}>
            Add structured policy
          </Button>
        </Group>
      )}
    </Stack>
  );
}
