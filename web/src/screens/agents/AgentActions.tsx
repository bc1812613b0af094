import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useNavigate } from 'react-router';
import { client, type Schemas } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { useWrite } from '../../lib/mutations';
import { useAccountId, useAccountKey, useSettings } from '../../session/account';
import { Can } from '../../session/permissions';

type Agent = Schemas['Agent'];

/** Saves `blob` as a file, the way a download link does. */
function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** What a person does to a whole agent: pause or activate it, export it, delete it (each only for a role that may). */
export function AgentActions({ agent }: { agent: Agent }) {
  const accountId = useAccountId();
  const navigate = useNavigate();
  const [confirming, confirm] = useDisclosure(false);
  const cost = useSettings().data?.agentCreateCost;
  const agentKey = useAccountKey('agents');
  const summaryKey = useAccountKey('summary');
  const setStatus = useWrite(
    async (status: Agent['status']) => unwrap(await client.PATCH('/api/agents/{id}', { params: { path: { id: agent.id } }, body: { status } })),
    { invalidates: [agentKey, summaryKey], success: (a) => `${a.name} is ${a.status}` },
  );
  const exporter = useWrite(async () => unwrap(await client.GET('/api/agents/{id}/export', { params: { path: { id: agent.id } } })), {
    onSuccess: (document) => download(`${agent.name.replace(/[^\w.-]+/g, '-') || 'agent'}.agent.json`, JSON.stringify(document, null, 2)),
    success: 'Exported (secrets left out)',
  });
  const remove = useWrite(async () => unwrap(await client.DELETE('/api/agents/{id}', { params: { path: { id: agent.id } } })), {
    invalidates: [agentKey],
    success: `Deleted ${agent.name}`,
    onSuccess: () => navigate(`/w/${accountId}/agents`, { replace: true }),
  });

  return (
    <Stack gap="xs" align="flex-end">
      <Group gap="sm">
        <Can right="write">
          {agent.status === 'active' ? (
            <Button variant="default" loading={setStatus.isPending} onClick={() => setStatus.mutate('paused')}>
              Pause
            </Button>
          ) : (
            <Button
              variant="default"
              loading={setStatus.isPending}
              onClick={() => setStatus.mutate('active')}
              title={agent.status === 'template' && cost !== undefined ? `Leaving template costs ${cost} units` : undefined}
            >
              {agent.status === 'template' && cost !== undefined ? `Activate (${cost} units)` : 'Activate'}
            </Button>
          )}
        </Can>
        <Can right="export">
          <Button variant="default" loading={exporter.isPending} onClick={() => exporter.mutate(undefined)}>
            Export
          </Button>
        </Can>
        <Can right="delete">
          <Button variant="outline" color="red" onClick={confirm.open}>
            Delete
          </Button>
        </Can>
      </Group>
      <ApiErrorAlert error={setStatus.error ?? exporter.error} />
      <Modal opened={confirming} onClose={confirm.close} title={`Delete ${agent.name}?`} centered>
        <Stack>
          <Text>
            Its tools, connectors and triggers (with their schedules) are deleted with it, and user triggers that name it are unlinked. Runs
            already made stay in the run history. This cannot be undone.
          </Text>
          <ApiErrorAlert error={remove.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={confirm.close}>
              Keep it
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => remove.mutate(undefined)}>
              Delete agent
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
