import { Button, Group, JsonInput, Paper, SimpleGrid, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { client, type Schemas } from '../../api/client';
import { fieldOfMessage, unwrap } from '../../api/errors';
import { useComponentSchema, validateAgainst, type FieldError } from '../../api/openapi-schema';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { MarkdownEditor } from '../../components/MarkdownEditor';
import { SchemaFields } from '../../components/SchemaFields';
import { Loading } from '../../components/states';
import { useWrite } from '../../lib/mutations';
import { useAccountKey } from '../../session/account';
import { useCan } from '../../session/permissions';
import { useAgent } from './AgentPage';
import { fromRows, PoliciesEditor, toRows, type PolicyRow } from './PoliciesEditor';

type Agent = Schemas['Agent'];
type Patch = Schemas['UpdateAgent'];
const MODEL_KEYS = ['model', 'temperature', 'maxSteps'];

/** The agent's configuration besides the model settings, which have fields of their own. */
function otherConfig(config: Record<string, unknown>): string {
  const rest = Object.fromEntries(Object.entries(config).filter(([key]) => !MODEL_KEYS.includes(key)));
  return Object.keys(rest).length ? JSON.stringify(rest, null, 2) : '';
}

/** Every field of the agent, edited in place and saved as one PATCH of what changed. */
export function AgentOverview() {
  const agent = useAgent();
  if (!agent.data) return <Loading label="Loading the agent" />;
  // A fresh form per version of the agent (after a save, or when another member changed it).
  return <AgentForm key={agent.data.updatedAt} agent={agent.data} />;
}

function AgentForm({ agent }: { agent: Agent }) {
  const canWrite = useCan('write');
  const readOnly = !canWrite;
  const { schema } = useComponentSchema('UpdateAgent');
  const [fields, setFields] = useState({
    name: agent.name,
    description: agent.description,
    goal: agent.goal,
    persona: agent.persona,
    voice: agent.voice,
    systemPrompt: agent.systemPrompt,
  });
  const [policies, setPolicies] = useState<PolicyRow[]>(() => toRows(agent.policies));
  const [memory, setMemory] = useState<Record<string, unknown>>(agent.memoryConfig);
  const [model, setModel] = useState<Record<string, unknown>>(() => Object.fromEntries(Object.entries(agent.configJson).filter(([k]) => MODEL_KEYS.includes(k))));
  const [other, setOther] = useState(() => otherConfig(agent.configJson));
  const [errors, setErrors] = useState<FieldError[]>([]);
  const save = useWrite(
    async (patch: Patch) => unwrap(await client.PATCH('/api/agents/{id}', { params: { path: { id: agent.id } }, body: patch })),
    { invalidates: [useAccountKey('agents')], success: 'Saved' },
  );
  const errorOf = (path: string) => errors.find((e) => e.path === path || e.path.startsWith(`${path}.`))?.message;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: FieldError[] = [];
    const rows = fromRows(policies);
    if ('invalid' in rows) found.push({ path: 'policies', message: `Policy ${rows.invalid} is not a JSON object` });
    let extra: Record<string, unknown> = {};
    if (other.trim()) {
      try {
        const parsed: unknown = JSON.parse(other);
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error();
        extra = parsed as Record<string, unknown>;
      } catch {
        found.push({ path: 'configJson', message: 'Other configuration must be a JSON object' });
      }
    }
    const patch: Patch = {};
    for (const key of Object.keys(fields) as Array<keyof typeof fields>) if (fields[key] !== agent[key]) patch[key] = fields[key];
    if ('policies' in rows && JSON.stringify(rows.policies) !== JSON.stringify(agent.policies)) patch.policies = rows.policies as Patch['policies'];
    if (JSON.stringify(memory) !== JSON.stringify(agent.memoryConfig)) patch.memoryConfig = memory as Patch['memoryConfig'];
    const configJson = { ...extra, ...model };
    // configJson is a merge patch: keys that were removed are sent as null.
    const removed = Object.keys(agent.configJson).filter((key) => !(key in configJson));
    if (JSON.stringify(configJson) !== JSON.stringify(agent.configJson) || removed.length) {
      patch.configJson = { ...configJson, ...Object.fromEntries(removed.map((key) => [key, null])) };
    }
    if (schema && !found.length) found.push(...validateAgainst(schema, { ...patch, configJson: configJson }));
    setErrors(found);
    if (found.length || Object.keys(patch).length === 0) return;
    save.mutate(patch, {
      onError: (err) => {
        const field = err instanceof Error ? fieldOfMessage(err.message) : null;
        if (field) setErrors([{ path: field, message: err.message.replace(/^body\.[^:]+:\s*/, '') }]);
      },
    });
  };

  const text = (key: keyof typeof fields, label: string, options: { multiline?: boolean; description?: string; max?: number } = {}) => {
    const Input = options.multiline ? Textarea : TextInput;
    return (
      <Input
        label={label}
        description={options.description}
        value={fields[key]}
        readOnly={readOnly}
        maxLength={options.max}
        autosize={options.multiline ? true : undefined}
        minRows={options.multiline ? 2 : undefined}
        error={errorOf(key)}
        onChange={(e) => setFields({ ...fields, [key]: e.currentTarget.value })}
      />
    );
  };
  const memorySchema = schema?.properties?.memoryConfig;
  const configSchema = schema?.properties?.configJson;

  return (
    <form onSubmit={submit} aria-label="Agent settings">
      <Stack gap="lg">
        {readOnly && <Text c="dimmed">Your role in this account is read-only: the fields are shown, not editable.</Text>}
        <Paper withBorder p="md">
          <Title order={2} size="h4" mb="sm">
            Identity
          </Title>
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            {text('name', 'Name', { max: 200 })}
            {text('voice', 'Voice', { description: 'A style word: "friendly", "formal"…', max: 200 })}
          </SimpleGrid>
          <Stack mt="sm">
            {text('description', 'Description', { multiline: true, max: 2000 })}
            {text('goal', 'Goal', { multiline: true, description: 'What the agent is for, in its own system message.' })}
            {text('persona', 'Persona', { multiline: true, description: 'Who the agent speaks as.' })}
          </Stack>
        </Paper>
        <Paper withBorder p="md">
          <MarkdownEditor
            label="System prompt"
            description="Markdown; the start of every run's system message, before the goal, persona, voice and policies."
            value={fields.systemPrompt}
            maxLength={100_000}
            error={errorOf('systemPrompt')}
            onChange={(systemPrompt) => !readOnly && setFields({ ...fields, systemPrompt })}
          />
        </Paper>
        <Paper withBorder p="md">
          <PoliciesEditor rows={policies} onChange={setPolicies} readOnly={readOnly} error={errorOf('policies')} />
        </Paper>
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <Paper withBorder p="md">
            <Title order={2} size="h4" mb="sm">
              Memory
            </Title>
            {memorySchema ? (
              <fieldset disabled={readOnly} style={{ border: 0, padding: 0, margin: 0 }}>
                <SchemaFields schema={memorySchema} value={memory} onChange={setMemory} errors={errors} path="memoryConfig" labels={{ type: 'Memory type', maxMessages: 'Messages kept', ttlMinutes: 'Kept for (minutes)' }} />
              </fieldset>
            ) : (
              <Loading label="Loading the form" />
            )}
          </Paper>
          <Paper withBorder p="md">
            <Title order={2} size="h4" mb="sm">
              Model settings
            </Title>
            {configSchema?.properties ? (
              <fieldset disabled={readOnly} style={{ border: 0, padding: 0, margin: 0 }}>
                <SchemaFields schema={{ ...configSchema, required: [] }} value={model} onChange={setModel} errors={errors} path="configJson" labels={{ maxSteps: 'Max steps' }} />
              </fieldset>
            ) : (
              <Loading label="Loading the form" />
            )}
          </Paper>
        </SimpleGrid>
        <Paper withBorder p="md">
          <JsonInput
            label="Other configuration"
            description="Any other keys of configJson, as a JSON object (free-form; the model settings above are merged in)."
            autosize
            minRows={3}
            formatOnBlur
            readOnly={readOnly}
            value={other}
            onChange={setOther}
            error={errorOf('configJson') && !MODEL_KEYS.some((k) => errorOf(`configJson.${k}`)) ? errorOf('configJson') : undefined}
          />
        </Paper>
        <ApiErrorAlert error={save.error} />
        {errors.length > 0 && !save.error && (
          <ApiErrorAlert error={new Error(errors.map((e) => `${e.path || 'body'}: ${e.message}`).join('; '))} title="Check the highlighted fields" />
        )}
        {canWrite && (
          <Group justify="flex-end" pos="sticky" bottom={0} py="sm" bg="var(--mantine-color-body)">
            <Button type="submit" loading={save.isPending}>
              Save changes
            </Button>
          </Group>
        )}
      </Stack>
    </form>
  );
}
