import { ActionIcon, Button, Group, JsonInput, NativeSelect, NumberInput, PasswordInput, Stack, Switch, TagsInput, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import type { FieldError, JsonSchema } from '../api/openapi-schema';

type Value = Record<string, unknown>;

/** Words for a property name: `pairAddresses` → "Pair addresses". */
export function labelOf(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/_/g, ' ').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The API marks write-only values in their description ("Secret: stored encrypted…", header values). A URL
 * is never one as a whole (only some of its query values are masked on read): it stays readable as typed.
 */
function isSecret(schema: JsonSchema): boolean {
  return /\bsecret\b/i.test(schema.description ?? '') && schema.type === 'string' && schema.format !== 'uri';
}

function errorAt(errors: FieldError[], path: string): string | undefined {
  return errors.find((e) => e.path === path || e.path.startsWith(`${path}.`))?.message;
}

/**
 * The fields of an object schema from the API's OpenAPI document, one input per property chosen by its
 * type: text (a password input for secrets, which the API shows masked after the request that set them),
 * a select for an enum, a number, a switch, tags for a list of strings, name/value rows for a string map,
 * JSON for anything else. `errors` are the schema's and the API's findings, by dotted path under `path`.
 */
export function SchemaFields({
  schema,
  value,
  onChange,
  errors = [],
  path = '',
  labels = {},
}: {
  schema: JsonSchema;
  value: Value;
  onChange: (next: Value) => void;
  errors?: FieldError[];
  path?: string;
  labels?: Record<string, string>;
}) {
  const required = new Set(schema.required ?? []);
  return (
    <Stack gap="sm">
      {Object.entries(schema.properties ?? {}).map(([name, property]) => {
        const fieldPath = path ? `${path}.${name}` : name;
        const common = {
          label: labels[name] ?? labelOf(name),
          description: property.description,
          required: required.has(name),
          error: errorAt(errors, fieldPath),
        };
        const set = (next: unknown) => {
          const copy = { ...value };
          if (next === undefined) delete copy[name];
          else copy[name] = next;
          onChange(copy);
        };
        return <Field key={name} name={name} schema={property} value={value[name]} set={set} common={common} />;
      })}
    </Stack>
  );
}

interface Common {
  label: string;
  description?: string;
  required: boolean;
  error?: string;
}

function Field({ name, schema, value, set, common }: { name: string; schema: JsonSchema; value: unknown; set: (v: unknown) => void; common: Common }) {
  if (schema.enum) {
    const options = schema.enum.map(String);
    return (
      <NativeSelect
        {...common}
        data={common.required ? options : ['', ...options]}
        value={value === undefined ? String(schema.default ?? '') : String(value)}
        onChange={(e) => set(e.currentTarget.value === '' ? undefined : e.currentTarget.value)}
      />
    );
  }
  if (schema.type === 'boolean') {
    return <Switch label={common.label} description={common.description} error={common.error} checked={Boolean(value ?? schema.default)} onChange={(e) => set(e.currentTarget.checked)} />;
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    return (
      <NumberInput
        {...common}
        min={schema.minimum}
        max={schema.maximum}
        allowDecimal={schema.type === 'number'}
        value={typeof value === 'number' ? value : ''}
        onChange={(v) => set(v === '' ? undefined : Number(v))}
      />
    );
  }
  if (schema.type === 'array' && schema.items?.type === 'string') {
    return <TagsInput {...common} value={Array.isArray(value) ? (value as string[]) : []} onChange={(v) => set(v)} placeholder="Type a value, then Enter" />;
  }
  if (schema.type === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object' && schema.additionalProperties.type === 'string' && !schema.properties) {
    return <StringMap name={name} common={common} value={(value as Record<string, string> | undefined) ?? {}} set={set} />;
  }
  if (schema.type === 'string') {
    const Input = isSecret(schema) ? PasswordInput : TextInput;
    return <Input {...common} type={schema.format === 'uri' ? 'url' : undefined} value={typeof value === 'string' ? value : ''} onChange={(e) => set(e.currentTarget.value === '' && !common.required ? undefined : e.currentTarget.value)} />;
  }
  return <JsonField common={common} value={value} set={set} />;
}

/** Any JSON value, edited as text; parsed as you type (an error until it parses). */
function JsonField({ common, value, set }: { common: Common; value: unknown; set: (v: unknown) => void }) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value, null, 2));
  const [parseError, setParseError] = useState<string>();
  return (
    <JsonInput
      {...common}
      error={parseError ?? common.error}
      autosize
      minRows={3}
      formatOnBlur
      value={text}
      onChange={(next) => {
        setText(next);
        if (next.trim() === '') {
          setParseError(undefined);
          return set(undefined);
        }
        try {
          set(JSON.parse(next));
          setParseError(undefined);
        } catch {
          setParseError('Not valid JSON yet');
        }
      }}
    />
  );
}

/** A map of names to strings (headers, response mappings) as rows of name and value. */
function StringMap({ name, common, value, set }: { name: string; common: Common; value: Record<string, string>; set: (v: unknown) => void }) {
  const [rows, setRows] = useState<Array<[string, string]>>(() => Object.entries(value));
  const update = (next: Array<[string, string]>) => {
    setRows(next);
    set(Object.fromEntries(next.filter(([key]) => key.trim() !== '')));
  };
  const secretish = name === 'headers';
  return (
    <Stack gap={4}>
      <Text size="sm" fw={500}>
        {common.label}
      </Text>
      {common.description && (
        <Text size="xs" c="dimmed">
          {common.description}
        </Text>
      )}
      {rows.map(([key, val], i) => (
        <Group key={i} gap="xs" wrap="nowrap" align="flex-end">
          <TextInput aria-label={`${common.label} ${i + 1} name`} placeholder="Name" value={key} onChange={(e) => update(rows.map((r, j) => (j === i ? [e.currentTarget.value, r[1]] : r)))} />
          {secretish ? (
            <PasswordInput style={{ flex: 1 }} aria-label={`${common.label} ${i + 1} value`} placeholder="Value" value={val} onChange={(e) => update(rows.map((r, j) => (j === i ? [r[0], e.currentTarget.value] : r)))} />
          ) : (
            <TextInput style={{ flex: 1 }} aria-label={`${common.label} ${i + 1} value`} placeholder="Value" value={val} onChange={(e) => update(rows.map((r, j) => (j === i ? [r[0], e.currentTarget.value] : r)))} />
          )}
          <ActionIcon variant="subtle" color="red" aria-label={`Remove ${common.label.toLowerCase()} ${i + 1}`} onClick={() => update(rows.filter((_, j) => j !== i))}>
            <span aria-hidden="true">✕</span>
          </ActionIcon>
        </Group>
      ))}
      <Group>
        <Button size="xs" variant="subtle" onClick={() => update([...rows, ['', '']])}>
          Add {common.label.toLowerCase().replace(/s$/, '')}
        </Button>
      </Group>
      {common.error && (
        <Text size="xs" c="red">
          {common.error}
        </Text>
      )}
    </Stack>
  );
}
