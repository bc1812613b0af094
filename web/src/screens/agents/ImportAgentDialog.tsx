import { Button, FileInput, Group, List, Modal, PasswordInput, Stack, Text } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { client, type Schemas } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { useIntentKey, useWrite } from '../../lib/mutations';
import { useAccountId, useAccountKey, useAccountSummary, useSettings } from '../../session/account';

type Export = Schemas['AgentExport'];
type Item = { type: string; name: string; configJson: Record<string, unknown>; secrets?: string[] };

/** One secret the export left out: which item, and where in its configJson. */
interface Hole {
  id: string;
  list: 'tools' | 'connectors';
  index: number;
  path: string;
  label: string;
}

function holesOf(document: Export): Hole[] {
  return (['tools', 'connectors'] as const).flatMap((list) =>
    (document[list] as Item[]).flatMap((item, index) =>
      (item.secrets ?? []).map((path) => ({ id: `${list}.${index}.${path}`, list, index, path, label: `${item.name} (${item.type}): ${path}` })),
    ),
  );
}

/** Sets `value` at a secret's path in a config: its first segment, then the rest as one key (a header's name may hold dots). */
function fill(config: Record<string, unknown>, path: string, value: string): Record<string, unknown> {
  const [head, ...rest] = path.split('.');
  if (!head) return config;
  if (!rest.length) return { ...config, [head]: value };
  const inner = (config[head] as Record<string, unknown> | undefined) ?? {};
  return { ...config, [head]: { ...inner, [rest.join('.')]: value } };
}

/** Import an exported agent (POST /api/agents/import): the file, then every secret the export left out. */
export function ImportAgentDialog({ onClose }: { onClose: () => void }) {
  const accountId = useAccountId();
  const navigate = useNavigate();
  const [document, setDocument] = useState<Export | null>(null);
  const [fileError, setFileError] = useState<string>();
  const [values, setValues] = useState<Record<string, string>>({});
  const idempotencyKey = useIntentKey();
  const cost = useSettings().data?.agentCreateCost;
  const balance = useAccountSummary().data?.balance;
  const holes = document ? holesOf(document) : [];
  const importer = useWrite(
    async (body: Schemas['ImportAgent']) => unwrap(await client.POST('/api/agents/import', { body, headers: { 'idempotency-key': idempotencyKey } })),
    {
      invalidates: [useAccountKey('agents'), useAccountKey('summary')],
      success: (result) => `Imported ${result.agent.name}`,
      onSuccess: (result) => navigate(`/w/${accountId}/agents/${result.agent.id}/overview`),
    },
  );

  const read = async (file: File | null) => {
    setDocument(null);
    setFileError(undefined);
    if (!file) return;
    try {
      const parsed = JSON.parse(await file.text()) as Export;
      if (parsed?.version !== 1 || !parsed.agent) throw new Error('not an agent export');
      setDocument({ ...parsed, tools: parsed.tools ?? [], connectors: parsed.connectors ?? [], triggers: parsed.triggers ?? [] });
    } catch {
      setFileError('This file is not an agent export (GET /api/agents/:id/export, version 1).');
    }
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!document) return;
    const filled = { tools: [...document.tools] as Item[], connectors: [...document.connectors] as Item[] };
    for (const hole of holes) {
      const value = values[hole.id];
      if (!value) continue;
      const item = filled[hole.list][hole.index]!;
      filled[hole.list][hole.index] = { ...item, configJson: fill(item.configJson, hole.path, value) };
    }
    const { createdAt: _c, updatedAt: _u, id: _i, accountId: _a, ...agent } = document.agent as Export['agent'] & { createdAt?: string; updatedAt?: string; id?: string; accountId?: string };
    importer.mutate({ ...document, agent, ...filled } as unknown as Schemas['ImportAgent']);
  };

  const free = document?.agent.status === 'template';
  return (
    <Modal opened onClose={onClose} title="Import an agent" size="lg" centered>
      <form onSubmit={submit}>
        <Stack>
          <FileInput label="Export file" description="A .json file from an agent's Export button." accept="application/json,.json" clearable onChange={(file) => void read(file)} error={fileError} />
          {document && (
            <>
              <Text>
                <strong>{document.agent.name}</strong> ({document.agent.status}), with {document.tools.length} tools, {document.connectors.length} connectors and{' '}
                {document.triggers.length} triggers.{' '}
                {free ? 'Templates are free.' : cost !== undefined && balance !== undefined ? `Importing it costs ${cost} units; the balance is ${balance.toLocaleString()} units.` : ''}
              </Text>
              {holes.length > 0 ? (
                <Stack gap="xs">
                  <Text size="sm">The export left these secrets out; enter each (they are stored encrypted and shown masked afterwards):</Text>
                  {holes.map((hole) => (
                    <PasswordInput key={hole.id} label={hole.label} required value={values[hole.id] ?? ''} onChange={(e) => setValues({ ...values, [hole.id]: e.currentTarget.value })} />
                  ))}
                </Stack>
              ) : (
                <Text size="sm" c="dimmed">
                  It needs no secret.
                </Text>
              )}
              {document.triggers.length > 0 && (
                <List size="sm" c="dimmed">
                  <List.Item>Webhook triggers get a new hook path and token.</List.Item>
                </List>
              )}
            </>
          )}
          <ApiErrorAlert error={importer.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" disabled={!document} loading={importer.isPending}>
              Import
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
