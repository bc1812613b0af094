import { Button, Group, Modal, Stack, Table, Text, TextInput, VisuallyHidden } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { client, type Schemas } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { ConfirmButton } from '../../components/ConfirmButton';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { PageHeader } from '../../components/PageHeader';
import { ShownOnce } from '../../components/ShownOnce';
import { EmptyState, QueryState } from '../../components/states';
import { useIntentKey, useWrite } from '../../lib/mutations';

const KEYS = ['api-keys'];

/**
 * Your API keys (GET /api/auth/api-keys): credentials for scripts, yours in every account you can act in.
 * A new key is shown once; revoking one refuses it from the next request on.
 */
export function ApiKeys() {
  const list = useCursorList(KEYS, async (cursor) => pageOf(await client.GET('/api/auth/api-keys', { params: { query: { cursor, limit: 50 } } })));
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys let scripts call the API as you: send Authorization: Bearer <key>, and Account-Id to act in a workspace you belong to. They are yours, not the account's."
        actions={<Button onClick={() => setCreating(true)}>New API key</Button>}
      />
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading API keys">
        {(keys) =>
          keys.length === 0 ? (
            <EmptyState
              title="No API keys"
              action={
                <Button variant="light" onClick={() => setCreating(true)}>
                  Create a key
                </Button>
              }
            >
              Create a key for a script or a CI job. It is shown once; keep it like a password.
            </EmptyState>
          ) : (
            <>
              <Table verticalSpacing="sm" aria-label="API keys">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Starts with</Table.Th>
                    <Table.Th>Created</Table.Th>
                    <Table.Th>Last used</Table.Th>
                    <Table.Th>
                      <VisuallyHidden>Actions</VisuallyHidden>
                    </Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {keys.map((key) => (
                    <KeyRow key={key.id} apiKey={key} />
                  ))}
                </Table.Tbody>
              </Table>
              <LoadMore list={list} label="Load more keys" />
            </>
          )
        }
      </QueryState>
      {creating && <CreateKeyDialog onClose={() => setCreating(false)} />}
    </>
  );
}

function KeyRow({ apiKey }: { apiKey: Schemas['ApiKey'] }) {
  const revoke = useWrite(async () => unwrap(await client.DELETE('/api/auth/api-keys/{id}', { params: { path: { id: apiKey.id } } })), {
    invalidates: [KEYS],
    success: `Revoked ${apiKey.name}`,
  });
  return (
    <Table.Tr>
      <Table.Td>{apiKey.name}</Table.Td>
      <Table.Td>
        <Text size="sm" ff="monospace">
          {apiKey.prefix}…
        </Text>
      </Table.Td>
      <Table.Td>
        <DateTime value={apiKey.createdAt} relative />
      </Table.Td>
      <Table.Td>{apiKey.lastUsedAt ? <DateTime value={apiKey.lastUsedAt} relative /> : 'never'}</Table.Td>
      <Table.Td>
        <ConfirmButton
          size="compact-sm"
          aria-label={`Revoke ${apiKey.name}`}
          title={`Revoke ${apiKey.name}?`}
          message="Requests with this key are refused from now on. Scripts using it stop working."
          confirmLabel="Revoke key"
          onConfirm={() => revoke.mutate(undefined)}
          pending={revoke.isPending}
          error={revoke.error}
        >
          Revoke
        </ConfirmButton>
      </Table.Td>
    </Table.Tr>
  );
}

function CreateKeyDialog({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState('');
  const idempotencyKey = useIntentKey();
  const create = useWrite(async () => unwrap(await client.POST('/api/auth/api-keys', { body: { name: name.trim() }, headers: { 'idempotency-key': idempotencyKey } })), {
    invalidates: [KEYS],
    success: (k) => `Created ${k.name}`,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(undefined);
  };
  return (
    <Modal opened onClose={onClose} title={create.data ? `${create.data.name} is ready` : 'New API key'} size="lg" centered>
      {create.data ? (
        <Stack>
          <ShownOnce label="API key" value={create.data.key} />
          <Group justify="flex-end">
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <form onSubmit={submit}>
          <Stack>
            <TextInput label="Name" description="What uses it: a script, a CI job" required maxLength={200} value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
            <ApiErrorAlert error={create.error} />
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={create.isPending} disabled={!name.trim()}>
                Create
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
