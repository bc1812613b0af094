import { Anchor, Badge, Button, Group, Modal, NativeSelect, Paper, Stack, Switch, Table, Text, Textarea, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { fieldOfMessage } from '../../api/errors';
import { useComponentSchema, validateAgainst, variantsByType, type FieldError } from '../../api/openapi-schema';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { LoadMore, useCursorList, type Page } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { labelOf, SchemaFields } from '../../components/SchemaFields';
import { EmptyState, Loading, QueryState } from '../../components/states';
import { mergePatch } from '../../lib/merge-patch';
import { useWrite } from '../../lib/mutations';
import { useAccountKey } from '../../session/account';
import { Can, useCan } from '../../session/permissions';

/** A tool or a connector as the API returns it. */
export interface ChildItem {
  id: string;
  type: string;
  name: string;
  description?: string;
  configJson: Record<string, unknown>;
  enabled: boolean;
  updatedAt: string;
}

export interface ChildBody {
  type?: string;
  name?: string;
  description?: string;
  enabled?: boolean;
  configJson?: Record<string, unknown>;
}

/** How one kind of an agent's children is read and written (tools, connectors). */
export interface ChildApi<T extends ChildItem> {
  /** "tool", "connector". */
  noun: string;
  /** The create body's schema in the OpenAPI document (a union on `type`). */
  createSchema: string;
  intro: string;
  list(agentId: string, cursor: string | undefined): Promise<Page<T>>;
  create(agentId: string, body: ChildBody): Promise<T>;
  update(id: string, body: ChildBody): Promise<T>;
  remove(id: string): Promise<unknown>;
  /** A short line saying what the item is configured to do. */
  summary(item: T): string;
  /** Labels of config fields that words alone would spell wrong (`url` → "URL"). */
  fieldLabels?: Record<string, string>;
  /** What the Type field calls a type, when not its name (`mcp` → "MCP server"). */
  typeLabels?: Record<string, string>;
  /** The item's own page (a path), when it has one: its name links there. */
  pageOf?(item: T): string;
}

/**
 * An agent's tools or connectors: a list with an enabled switch, and a form per type generated from the
 * API's own create schema (checked against it before sending; the API's 400 is shown on its field).
 */
export function ChildResources<T extends ChildItem>({ agentId, api }: { agentId: string; api: ChildApi<T> }) {
  const key = useAccountKey('agents', agentId, api.noun);
  const list = useCursorList(key, (cursor) => api.list(agentId, cursor));
  const [editing, setEditing] = useState<T | 'new' | null>(null);
  const [deleting, setDeleting] = useState<T | null>(null);
  const toggle = useWrite((item: T) => api.update(item.id, { enabled: !item.enabled }), { invalidates: [key] });
  const remove = useWrite((item: T) => api.remove(item.id), { invalidates: [key], success: `Deleted the ${api.noun}`, onSuccess: () => setDeleting(null) });
  const canWrite = useCan('write');
  const plural = `${api.noun}s`;
  const title = labelOf(plural);

  return (
    <Stack>
      <Group justify="space-between">
        <Text c="dimmed" size="sm" maw={720}>
          {api.intro}
        </Text>
        <Can right="write">
          <Button onClick={() => setEditing('new')}>Add {api.noun}</Button>
        </Can>
      </Group>
      <ApiErrorAlert error={toggle.error} />
      <QueryState query={{ ...list, data: list.items }} loadingLabel={`Loading ${plural}`}>
        {(items) =>
          items.length === 0 ? (
            <EmptyState
              title={`No ${plural} yet`}
              action={
                <Can right="write">
                  <Button variant="light" onClick={() => setEditing('new')}>
                    Add the first {api.noun}
                  </Button>
                </Can>
              }
            >
              {api.intro}
            </EmptyState>
          ) : (
            <>
              <Table verticalSpacing="sm" aria-label={title}>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Type</Table.Th>
                    <Table.Th>Configuration</Table.Th>
                    <Table.Th>Enabled</Table.Th>
                    <Table.Th>Updated</Table.Th>
                    <Table.Th aria-label="Actions" />
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {items.map((item) => (
                    <Table.Tr key={item.id}>
                      <Table.Td fw={500}>
                        {api.pageOf ? (
                          <Anchor component={Link} to={api.pageOf(item)}>
                            {item.name}
                          </Anchor>
                        ) : (
                          item.name
                        )}
                      </Table.Td>
                      <Table.Td>
                        <Badge variant="light" color="gray">
                          {item.type}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm" c="dimmed" lineClamp={2} style={{ wordBreak: 'break-all' }}>
                          {api.summary(item)}
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        <Switch aria-label={`${item.name} enabled`} checked={item.enabled} disabled={!canWrite || toggle.isPending} onChange={() => toggle.mutate(item)} />
                      </Table.Td>
                      <Table.Td>
                        <DateTime value={item.updatedAt} relative />
                      </Table.Td>
                      <Table.Td>
                        <Group gap="xs" justify="flex-end" wrap="nowrap">
                          <Button size="xs" variant="default" onClick={() => setEditing(item)} aria-label={`${canWrite ? 'Edit' : 'View'} ${item.name}`}>
                            {canWrite ? 'Edit' : 'View'}
                          </Button>
                          <Can right="delete">
                            <Button size="xs" variant="subtle" color="red" onClick={() => setDeleting(item)} aria-label={`Delete ${item.name}`}>
                              Delete
                            </Button>
                          </Can>
                        </Group>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
              <LoadMore list={list} />
            </>
          )
        }
      </QueryState>
      {editing && <ChildForm agentId={agentId} api={api} item={editing === 'new' ? null : editing} listKey={key} onClose={() => setEditing(null)} />}
      <Modal opened={deleting !== null} onClose={() => setDeleting(null)} title={`Delete ${deleting?.name ?? ''}?`} centered>
        <Stack>
          <Text>The agent stops using it at once. This cannot be undone.</Text>
          <ApiErrorAlert error={remove.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setDeleting(null)}>
              Keep it
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => deleting && remove.mutate(deleting)}>
              Delete {api.noun}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}

function ChildForm<T extends ChildItem>({ agentId, api, item, listKey, onClose }: { agentId: string; api: ChildApi<T>; item: T | null; listKey: unknown[]; onClose: () => void }) {
  const { schema, error: schemaError } = useComponentSchema(api.createSchema);
  const variants = schema ? variantsByType(schema) : undefined;
  const types = variants ? [...variants.keys()] : [];
  const [type, setType] = useState(item?.type ?? '');
  const chosen = type || types[0] || '';
  const variant = variants?.get(chosen);
  const [name, setName] = useState(item?.name ?? '');
  const [description, setDescription] = useState(item?.description ?? '');
  const [enabled, setEnabled] = useState(item?.enabled ?? true);
  const [config, setConfig] = useState<Record<string, unknown>>(item?.configJson ?? {});
  const [errors, setErrors] = useState<FieldError[]>([]);
  const canWrite = useCan('write');
  const save = useWrite(
    async (body: ChildBody) => (item ? api.update(item.id, body) : api.create(agentId, body)),
    { invalidates: [listKey], success: item ? 'Saved' : `Added the ${api.noun}`, onSuccess: onClose },
  );
  const hasDescription = Boolean(variant?.properties?.description);
  const errorOf = (path: string) => errors.find((e) => e.path === path)?.message;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!variant) return;
    const body: ChildBody = { type: chosen, name: name.trim(), enabled, configJson: config, ...(hasDescription ? { description } : {}) };
    const found = validateAgainst(variant, body);
    setErrors(found);
    if (found.length) return;
    // An update sends what changed; configJson as a merge patch (masked secrets sent back mean "unchanged").
    const payload: ChildBody = item
      ? {
          ...(body.name !== item.name ? { name: body.name } : {}),
          ...(hasDescription && body.description !== item.description ? { description: body.description } : {}),
          ...(body.enabled !== item.enabled ? { enabled: body.enabled } : {}),
          ...(chosen !== item.type ? { type: chosen, configJson: config } : Object.keys(mergePatch(item.configJson, config)).length ? { configJson: mergePatch(item.configJson, config) } : {}),
        }
      : body;
    if (item && Object.keys(payload).length === 0) return onClose();
    save.mutate(payload, {
      onError: (err) => {
        const field = err instanceof Error ? fieldOfMessage(err.message) : null;
        if (field) setErrors([{ path: field, message: err.message.replace(/^body\.[^:]+:\s*/, '') }]);
      },
    });
  };

  return (
    <Modal opened onClose={onClose} title={item ? `${canWrite ? 'Edit' : 'View'} ${item.name}` : `Add a ${api.noun}`} size="lg" centered>
      {schemaError ? (
        <ApiErrorAlert error={schemaError} />
      ) : !variant ? (
        <Loading label="Loading the form" />
      ) : (
        <form onSubmit={submit}>
          <fieldset disabled={!canWrite} style={{ border: 0, padding: 0, margin: 0 }}>
            <Stack>
              <NativeSelect
                label="Type"
                value={chosen}
                onChange={(e) => {
                  setType(e.currentTarget.value);
                  setConfig({});
                  setErrors([]);
                }}
                data={types.map((t) => ({ value: t, label: api.typeLabels?.[t] ?? t }))}
                description={item ? 'Changing the type replaces the whole configuration.' : undefined}
              />
              <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} error={errorOf('name')} maxLength={200} data-autofocus />
              {hasDescription && (
                <Textarea
                  label="Description"
                  description="What the tool does; a model reads it to decide when to call it."
                  autosize
                  minRows={2}
                  value={description}
                  onChange={(e) => setDescription(e.currentTarget.value)}
                  error={errorOf('description')}
                />
              )}
              <Switch label="Enabled" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
              {variant.properties?.configJson && (
                <Paper withBorder p="sm">
                  <Text fw={500} size="sm" mb="xs">
                    {api.typeLabels?.[chosen] ?? labelOf(chosen)} configuration
                  </Text>
                  <SchemaFields key={chosen} schema={variant.properties.configJson} value={config} onChange={setConfig} errors={errors} path="configJson" labels={api.fieldLabels} />
                </Paper>
              )}
              {errors.length > 0 && !save.error && (
                <ApiErrorAlert error={new Error(errors.map((e) => `${e.path || 'body'}: ${e.message}`).join('; '))} title="Check the highlighted fields" />
              )}
              <ApiErrorAlert error={save.error} />
              {canWrite && (
                <Group justify="flex-end">
                  <Button variant="default" onClick={onClose}>
                    Cancel
                  </Button>
                  <Button type="submit" loading={save.isPending}>
                    {item ? 'Save' : `Add ${api.noun}`}
                  </Button>
                </Group>
              )}
            </Stack>
          </fieldset>
        </form>
      )}
    </Modal>
  );
}
